import { KERNEL_INFO, definePlugin } from '../../core/index.js';

export default definePlugin({
  activate(ctx) {
    const info = ctx.get(KERNEL_INFO);
    // Made on the first call and kept: a formatter costs ICU work (toLocaleString built one per call,
    // ~0.4 ms), and the first one loads ICU's data (~40 ms), which the kernel's start must not pay.
    let clock: { timeZone: string; local: Intl.DateTimeFormat } | undefined;
    const localClock = () => {
      if (!clock) {
        const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
        clock = { timeZone, local: new Intl.DateTimeFormat('sv-SE', { dateStyle: 'short', timeStyle: 'medium', hour12: false, timeZone }) };
      }
      return clock;
    };
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
          const { timeZone, local } = localClock();
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
