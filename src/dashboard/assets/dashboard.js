// The dashboard's only script: small enhancements of pages that work without it.
// - "Copy" buttons copy the field they name (data-copy) to the clipboard.
// - Forms marked data-autosubmit submit when a select in them changes.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute('data-copy') || '');
  if (!field) return;
  field.select();
  const done = () => {
    button.textContent = 'Copied';
  };
  if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, () => document.execCommand('copy') && done());
  else if (document.execCommand('copy')) done();
});
document.addEventListener('change', (event) => {
  const target = event.target;
  if (target instanceof HTMLSelectElement && target.form && target.form.hasAttribute('data-autosubmit')) target.form.requestSubmit();
});
