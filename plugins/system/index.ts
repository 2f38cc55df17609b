import { KERNEL_INFO, definePlugin } from '../../core/index.js';

export default definePlugin({
  activate(ctx) {
    const info = ctx.get(KERNEL_INFO);
    // Made once: a formatter costs ICU work (toLocaleString built one per call, ~0.4 ms). The zone is the
    // process's, fixed at start like Node's own idea of it.
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const local = new Intl.DateTimeFormat('sv-SE', { dateStyle: 'short', timeStyle: 'medium', hour12: false, timeZone });
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
            timeZone,
            local: local.format(now),
            unixMs: now.getTime(),
          };
        },
      },
    };
  },
});
