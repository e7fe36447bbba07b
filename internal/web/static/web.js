// faultline serve: the labelling panel's evidence picking. Everything else
// is plain HTML and htmx attributes; this file is the only script besides
// htmx, and the pages work without it (steps and quotes can be typed).
"use strict";

// The mode evidence goes to: the one picked with ✎ in the panel.
function activeMode() {
  const picked = document.querySelector("#label-panel input[name=active]:checked");
  return picked ? picked.value : null;
}

function field(mode, kind) {
  return document.querySelector(`#label-panel [name="${kind}-${CSS.escape(mode)}"]`);
}

function stepsOf(input) {
  return input.value.split(/[\s,;#]+/).filter(Boolean).map(Number).filter(Number.isInteger);
}

function setSteps(input, steps) {
  input.value = [...new Set(steps)].sort((a, b) => a - b).join(", ");
}

// Citing evidence makes the mode present.
function markPresent(mode) {
  const radio = document.querySelector(`#label-panel input[name="v-${CSS.escape(mode)}"][value=present]`);
  if (radio) radio.checked = true;
}

function hint(text) {
  const h = document.querySelector("#label-panel .hint");
  if (h) {
    h.textContent = text;
    h.classList.add("flash");
    setTimeout(() => h.classList.remove("flash"), 1500);
  }
}

document.addEventListener("click", (e) => {
  const cite = e.target.closest("button.cite");
  if (!cite) return;
  const mode = activeMode();
  if (!mode) {
    hint("Pick a mode with ✎ first: cited steps and quotes go to it.");
    return;
  }
  const input = field(mode, "steps");
  const step = Number(cite.dataset.step);
  const steps = stepsOf(input);
  setSteps(input, steps.includes(step) ? steps.filter((s) => s !== step) : steps.concat(step));
  markPresent(mode);
  cite.classList.toggle("cited", !steps.includes(step));
});

// Selecting text inside one step quotes it, and cites the step.
document.addEventListener("mouseup", () => {
  const sel = window.getSelection();
  const text = sel ? sel.toString().trim() : "";
  if (!text || !sel.rangeCount) return;
  const range = sel.getRangeAt(0);
  const node = range.commonAncestorContainer;
  const el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
  const step = el && el.closest(".step .body") && el.closest(".step");
  const mode = activeMode();
  if (!step || !mode) return;
  field(mode, "quote").value = text;
  const input = field(mode, "steps");
  setSteps(input, stepsOf(input).concat(Number(step.dataset.step)));
  markPresent(mode);
  hint(`Quoted ${text.length} characters of step ${step.dataset.step} for ${mode}.`);
});
