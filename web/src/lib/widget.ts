// How a page finds its widgets and builds each one as it comes near the viewport:
// its code, and the chapters' wasm core if it uses it, load only then, so what a
// chapter fetches before its first screen is drawn is that screen's figure alone.
// Markup: <figure class="widget" data-widget="explorer" aria-labelledby="..."> ... </figure>
import type { Core } from './core';
import { el, setStatus } from './dom';
import { renameOldKeys } from './old-links.mjs';
import { UrlState } from './url-state';

export interface WidgetContext {
  core: Core;
  /** URL parameters owned by this widget (prefix = its data-widget name). */
  state: UrlState;
}

/** Builds the widget inside `root`; throwing shows the message in place of the widget. */
export type MountWidget = (root: HTMLElement, context: WidgetContext) => void | Promise<void>;
/** The same for a widget that brings its own module instead of the chapters' core. */
export type MountStandalone = (root: HTMLElement, context: { state: UrlState }) => void | Promise<void>;

/**
 * A widget's code, as a dynamic import: () => import('./rope').then((m) => m.mountRope).
 * A standalone widget may be built at once (`first: true`, the figure of a chapter's
 * first screen) instead of when it comes near, so that it is in the page's first frame.
 */
export type WidgetEntry =
  | { code: () => Promise<MountWidget> }
  | { standalone: () => Promise<MountStandalone>; first?: boolean };

/**
 * What a widget's folder registers in its entry.ts (web/src/widgets/<name>/entry.ts):
 * the widget's name, as its figure's data-widget says, and how to load its code.
 */
export type WidgetEntries = Record<string, WidgetEntry>;

/** How far outside the viewport a widget starts loading: one viewport height. */
const nearMargin = '100% 0px';

/**
 * Mounts each [data-widget] element of the page as it nears the viewport, with the
 * code its folder registered (`widgets`: widgets/registry.ts gathers every folder's). `loadCore` loads the chapter's wasm module, as a dynamic
 * import, so that it too is fetched only when the first widget that needs it nears.
 */
export function mountWidgets(loadCore: () => Promise<Core>, widgets: WidgetEntries): void {
  // User-timing marks (web/bench/page-speed.mjs reports them): when the page's script
  // started, when the core was ready, and when each widget was built.
  performance.mark('anatomy:script-start');
  const renamed = renameOldKeys(location.search);  // a link shared before the widgets had names
  if (renamed !== null) history.replaceState(history.state, '', `${location.pathname}${renamed}${location.hash}`);
  const bodies = new Map<HTMLElement, HTMLElement>();
  /** The page's hosts of these widgets parsed so far and not yet found, each given its body and status line. */
  const findHosts = () => [...document.querySelectorAll<HTMLElement>('[data-widget]')]
    .filter((host) => host.dataset.widget! in widgets && !bodies.has(host))
    .map((host) => {
      const body = host.querySelector<HTMLElement>('.widget-body') ?? host.appendChild(el('div', { class: 'widget-body' }));
      body.replaceChildren(statusLine('This figure is built when you scroll to it.'));
      bodies.set(host, body);
      return host;
    });

  // The first screen's figure is built at once; it waits for no layout to say it is near.
  // The page's script may run while the parser is still below that figure (the build
  // imports it from right after it, vite.config.ts's startEntryAfterFirstFigure): the
  // other widgets are found once the whole document is parsed.
  const isFirst = (host: HTMLElement) => { const entry = widgets[host.dataset.widget!]; return 'standalone' in entry && entry.first === true; };
  for (const host of findHosts().filter(isFirst)) void mount(host, bodies.get(host)!, widgets[host.dataset.widget!], loadCore);

  // One widget at a time, in the order they came near (those on screen first, then
  // the page's order), yielding a frame between them so each one paints as soon as
  // it is built instead of every widget waiting for the slowest.
  const queue: HTMLElement[] = [];
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    while (queue.length > 0) {
      const host = queue.shift()!;
      await mount(host, bodies.get(host)!, widgets[host.dataset.widget!], loadCore);
      await afterNextPaint();
    }
    running = false;
  };
  const observeTheRest = () => {
    const observer = new IntersectionObserver((entries) => {
      const near = entries.filter((e) => e.isIntersecting).map((e) => e.target as HTMLElement);
      near.forEach((host) => observer.unobserve(host));
      const offScreen = (host: HTMLElement) => (distanceFromViewport(host) === 0 ? 0 : 1);
      const inPageOrder = (a: HTMLElement, b: HTMLElement) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
      queue.push(...near.sort((a, b) => offScreen(a) - offScreen(b) || inPageOrder(a, b)));
      void run();
    }, { rootMargin: nearMargin });
    const mounted = [...bodies.keys()].filter(isFirst);
    findHosts();
    [...bodies.keys()].filter((host) => !mounted.includes(host)).forEach((host) => observer.observe(host));
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observeTheRest, { once: true });
  else observeTheRest();
}

/** The chapter's wasm core, for the first widget that needs it (its loader loads it once and retries after a failure). */
async function chapterCore(loadCore: () => Promise<Core>): Promise<Core> {
  const core = await loadCore();
  if (!performance.getEntriesByName('anatomy:core-ready').length) performance.mark('anatomy:core-ready');
  return core;
}

async function mount(host: HTMLElement, body: HTMLElement, entry: WidgetEntry, loadCore: () => Promise<Core>): Promise<void> {
  const name = host.dataset.widget!;
  performance.mark(`anatomy:near:${name}`);
  body.replaceChildren(statusLine('standalone' in entry ? 'Loading…' : 'Loading the wasm core…'));
  const state = new UrlState(name);
  try {
    if ('standalone' in entry) {
      const mountStandalone = await entry.standalone();
      body.replaceChildren();
      await mountStandalone(body, { state });
    } else {
      let code: MountWidget, core: Core;
      try {
        [code, core] = await Promise.all([entry.code(), chapterCore(loadCore)]);
      } catch (error) {
        body.replaceChildren(statusLine(`The wasm core could not be loaded: ${String(error)}`, 'error'));
        host.dataset.ready = 'error';
        return;
      }
      body.replaceChildren();
      await code(body, { core, state });
    }
    host.dataset.ready = 'true';
    performance.mark(`anatomy:mounted:${name}`);
  } catch (error) {
    body.replaceChildren(statusLine(`This widget failed to start: ${error instanceof Error ? error.message : String(error)}`, 'error'));
    host.dataset.ready = 'error';
  }
}

function statusLine(message: string, kind: 'info' | 'error' = 'info'): HTMLParagraphElement {
  const status = el('p', { class: 'status' });
  setStatus(status, message, kind);
  return status;
}

/**
 * Resolves once the browser has rendered a frame with what is built so far: a message
 * posted from an animation-frame callback is handled after that frame's rendering.
 * (A bare setTimeout(0) usually ran before it, so the next widget's build held back
 * the painting of the one just built.) In a hidden tab no frames are rendered: then
 * it resolves after 100 ms.
 */
function afterNextPaint(): Promise<void> {
  return new Promise((resolve) => {
    const fallback = setTimeout(resolve, 100);
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        clearTimeout(fallback);
        resolve();
      };
      channel.port2.postMessage(null);
    });
  });
}

/** 0 for an element on screen, else how many pixels it lies above or below the viewport. */
function distanceFromViewport(element: HTMLElement): number {
  const box = element.getBoundingClientRect();
  if (box.bottom < 0) return -box.bottom;
  if (box.top > innerHeight) return box.top - innerHeight;
  return 0;
}
