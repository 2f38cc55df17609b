import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** What scrolls the conversation: itself on a wide screen; on a narrow one (under 760 px) the page. */
const scrollerOf = (box: Element): Element => (box.scrollHeight > box.clientHeight + 1 ? box : document.scrollingElement ?? document.documentElement);

/**
 * Whether the conversation's end (`marker`) is within 80 px of the bottom of what shows it: the box, or
 * on a narrow screen the window (the composer and the page's padding lie below the end there: measured
 * by the page's height, the person was never at the end, and the page stopped following after a step).
 */
function nearEnd(box: Element, marker: Element | null): boolean {
  if (!marker) return true;
  const bottom = scrollerOf(box) === box ? box.getBoundingClientRect().bottom : window.innerHeight;
  return marker.getBoundingClientRect().bottom - bottom < 80;
}

/**
 * Keeps the conversation at its end as it grows, only while the person is there: reading earlier
 * messages, the 2-second follow of a turn (and every token of one streaming here) pulled them back down.
 * `grew` are the values whose change grows it; `mounted` changes when the conversation's box appears.
 * Answers `follow()`, for the person's own message: to the end, wherever they had scrolled.
 */
export function useFollowEnd(end: RefObject<HTMLElement>, mounted: boolean, grew: readonly unknown[]): { follow(): void } {
  const atEnd = useRef(true);
  // Where the page last left the scroll: above it, the person scrolled up, though its event has not come
  // yet (a token arriving in between pulled them back down, and they were at the end again for the page).
  const followedTo = useRef<number>();
  useEffect(() => {
    const box = end.current?.closest('.conversation');
    if (!box) return;
    const onScroll = (): void => {
      atEnd.current = nearEnd(box, end.current);
      // At the end by the person's own scroll (or the browser's, as content shrank): where it is now counts.
      if (atEnd.current) followedTo.current = scrollerOf(box).scrollTop;
    };
    box.addEventListener('scroll', onScroll, { passive: true });
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => { box.removeEventListener('scroll', onScroll); window.removeEventListener('scroll', onScroll); };
  }, [mounted]);
  useEffect(() => {
    const box = end.current?.closest('.conversation');
    const scroller = box ? scrollerOf(box) : undefined;
    // Content that shrank (a card answered, the stored copy in place of the live one) pulls the scroll up to
    // its new end, which is not the person going up: compared with that end, not with where it was.
    if (scroller && followedTo.current !== undefined && scroller.scrollTop < Math.min(followedTo.current, scroller.scrollHeight - scroller.clientHeight) - 1) atEnd.current = false;
    if (!atEnd.current) return;
    end.current?.scrollIntoView({ block: 'end' });
    followedTo.current = scroller?.scrollTop;
  }, grew);
  return {
    follow() {
      atEnd.current = true;
      followedTo.current = undefined;
    },
  };
}
