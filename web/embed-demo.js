// Demo control: changing an attribute re-renders the widget.
document.getElementById('demo-seq').addEventListener('change', (e) => {
  document.getElementById('w1').setAttribute('seq-len', e.target.value);
});
