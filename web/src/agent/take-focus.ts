import { useLayoutEffect, useRef, type MutableRef } from 'preact/hooks';

/**
 * A card that asks the person something (a confirmation, a question) takes the cursor when it appears,
 * unless the person is typing elsewhere than the message box: it stayed there (or on Stop), and a
 * keyboard user's Enter went on into the composer while the turn waited. The element needs `tabindex="-1"`.
 * Taken in the render's own task (a layout effect), before the browser handles the next key.
 */
export function useTakeFocus<T extends HTMLElement>(): MutableRef<T | null> {
  const own = useRef<T | null>(null);
  useLayoutEffect(() => {
    const active = document.activeElement;
    const typing = active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement || (active instanceof HTMLElement && active.isContentEditable);
    if (!typing || active.id === 'message') own.current?.focus();
  }, []);
  return own;
}
