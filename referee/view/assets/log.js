// A log page: the lines the address names (#L12, or a range #L12-L40) highlighted and in view.
"use strict";

function highlight() {
  const m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  for (const line of document.querySelectorAll("#log-lines .line.sel")) line.classList.remove("sel");
  if (!m) return;
  const first = Number(m[1]), last = Number(m[2] || m[1]);
  for (let n = first; n <= last; n++) {
    const line = document.getElementById("L" + n);
    if (line) line.classList.add("sel");
  }
  const start = document.getElementById("L" + first);
  if (start) start.scrollIntoView({ block: "start" });
}

window.addEventListener("hashchange", highlight);
highlight();
