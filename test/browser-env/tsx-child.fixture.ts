// Run with `node --import tsx` by tsx.slow.test.ts: the server runs under tsx, whose transform differs from
// vitest's (in-page functions get `__name` wrappers). Prints one JSON line with what the page-side code saw.
import { html, openEnv, startFixture } from './support.ts';

const fx = await startFixture({
  '/p': html(
    `<button style="position:absolute;left:10px;top:10px;width:100px;height:30px" onclick="setTimeout(() => { document.title = 'late'; }, 300)">b</button>
     <input style="position:absolute;left:10px;top:60px;width:100px;height:30px" oninput="document.title = this.value">`,
  ),
});
const te = await openEnv();
try {
  const sb = await te.create({ start_url: fx.url('/p'), network: { allow: [`127.0.0.1:${fx.port}`] }, som: true });
  const obs = await sb.observe({ screenshot: 'none' });
  const settled = await sb.step([{ action: 'click_label', label: 0 }], { screenshot: 'none' });
  const typed = await sb.step([{ action: 'type_label', label: 1, text: 'hi' }], { screenshot: 'none' });
  const scrolled = await sb.step([{ action: 'scroll', dy: 10 }], { screenshot: 'none' });
  process.stdout.write(
    JSON.stringify({
      som: obs.som?.length ?? -1,
      settled: settled.observation.title,
      typed: typed.observation.title,
      typeError: typed.observation.last_action_error,
      scrollError: scrolled.observation.last_action_error,
    }) + '\n',
  );
} finally {
  await te.close();
  await fx.close();
}
