// Loads the lab's WebAssembly and wires the page's buttons to it.
import init, { upload, run_line, new_session, bench_command, bench_frame } from "./lab_web.js";

const started = performance.now();
await init();
window.labReady = performance.now() - started;

document.getElementById("upload").addEventListener("change", async (e) => {
  for (const f of e.target.files) {
    upload(f.name, await f.text());
  }
  e.target.value = "";
});
document.getElementById("submit").addEventListener("click", () => run_line("lesson submit submission.json"));
document.getElementById("fresh").addEventListener("click", () => new_session());
window.lab = { upload, run_line, new_session, bench_command, bench_frame };
