// How a page finds its widgets and hands each one the shared wasm core.
// Markup: <figure class="widget" data-widget="w1" aria-labelledby="..."> ... </figure>
import { loadCore, Core } from './core';
import { el, setStatus } from './dom';
import { UrlState } from './url-state';

export interface WidgetContext {
  core: Core;
  /** URL parameters owned by this widget (prefix = its data-widget name). */
  state: UrlState;
}

/** Builds the widget inside `root`; throwing shows the message in place of the widget. */
export type MountWidget = (root: HTMLElement, context: WidgetContext) => void | Promise<void>;

/** Mounts every [data-widget] element of the page whose name is in `widgets` (listed by priority). */
export async function mountWidgets(widgets: Record<string, MountWidget>): Promise<void> {
  // User-timing marks (web/bench/page-speed.mjs reports them): when the page's
  // script started, when the core was ready, and when each widget was built.
  performance.mark('anatomy:script-start');
  const coreLoading = loadCore();
  coreLoading.catch(() => {}); // reported below, in the widgets
  const hosts = [...document.querySelectorAll<HTMLElement>('[data-widget]')].filter((h) => h.dataset.widget! in widgets);
  const bodies = hosts.map((host) => {
    const body = host.querySelector<HTMLElement>('.widget-body') ?? host.appendChild(el('div', { class: 'widget-body' }));
    const status = el('p', { class: 'status' });
    setStatus(status, 'Loading the wasm core…');
    body.replaceChildren(status);
    return body;
  });
  let core: Core;
  try {
    core = await coreLoading;
    performance.mark('anatomy:core-ready');
  } catch (error) {
    hosts.forEach((host, i) => {
      const status = el('p', { class: 'status' });
      setStatus(status, `The wasm core could not be loaded: ${String(error)}`, 'error');
      bodies[i].replaceChildren(status);
      host.dataset.ready = 'error';
    });
    return;
  }
  // One widget at a time: those on screen first, then the rest in the order the
  // page lists them (its main widget first), yielding between them so each one
  // paints as soon as it is built instead of every widget waiting for the slowest.
  const names = Object.keys(widgets);
  const order = hosts.map((host, i) => ({
    host,
    body: bodies[i],
    rank: (distanceFromViewport(host) === 0 ? 0 : 1000) + names.indexOf(host.dataset.widget!),
  }));
  order.sort((a, b) => a.rank - b.rank);
  for (const { host, body } of order) {
    const name = host.dataset.widget!;
    body.replaceChildren();
    try {
      await widgets[name](body, { core, state: new UrlState(name) });
      host.dataset.ready = 'true';
      performance.mark(`anatomy:mounted:${name}`);
    } catch (error) {
      const status = el('p', { class: 'status' });
      setStatus(status, `This widget failed to start: ${error instanceof Error ? error.message : String(error)}`, 'error');
      body.replaceChildren(status);
      host.dataset.ready = 'error';
    }
    await afterNextPaint();
  }
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
