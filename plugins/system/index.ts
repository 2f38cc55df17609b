import { KERNEL_INFO, definePlugin } from '../../core/index.js';

export default definePlugin({
  activate(ctx) {
    const info = ctx.get(KERNEL_INFO);
    return {
      system: {
        info: () => ({
          version: info.version,
          startedAt: info.startedAt,
          uptimeSeconds: Math.round((Date.now() - Date.parse(info.startedAt)) / 1000),
          node: process.version,
        }),
        current_time: () => {
          const now = new Date();
          return {
            utc: now.toISOString(),
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            local: now.toLocaleString('sv-SE', { hour12: false }),
            unixMs: now.getTime(),
          };
        },
      },
    };
  },
});
