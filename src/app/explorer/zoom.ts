// d3 zoom as a Svelte action, shared by the timeline and the graph: the view state lives in the
// component; d3 handles wheel, drag and pinch and reports transforms. A ZoomControl made by the
// component moves the view from code (fit, zoom buttons, bring a memory into view).
import { select, zoom, zoomIdentity, type D3ZoomEvent, type ZoomBehavior } from 'd3';
import type { ActionReturn } from 'svelte/action';

export interface Transform {
  k: number;
  x: number;
  y: number;
}

type Extent = [[number, number], [number, number]];

export interface ZoomOptions {
  scaleExtent: [number, number];
  /** The viewport (default: the element's box). */
  extent?: Extent;
  /** Where the view may go, in layout coordinates. */
  translateExtent?: Extent;
  /** Every transform; `byUser` when a wheel, drag or pinch caused it (not code). */
  onZoom: (t: Transform, byUser: boolean) => void;
  control: ZoomControl;
}

/** Moves the view of the element it is attached to (through d3, so its state stays in step). */
export class ZoomControl {
  private el: Element | null = null;
  private behaviour: ZoomBehavior<Element, unknown> | null = null;

  attach(el: Element, behaviour: ZoomBehavior<Element, unknown>): void {
    this.el = el;
    this.behaviour = behaviour;
  }

  detach(): void {
    this.el = null;
    this.behaviour = null;
  }

  transform(t: Transform): void {
    if (this.el && this.behaviour) this.behaviour.transform(select(this.el), zoomIdentity.translate(t.x, t.y).scale(t.k));
  }

  scaleBy(factor: number, point?: [number, number]): void {
    if (this.el && this.behaviour) this.behaviour.scaleBy(select(this.el), factor, point);
  }
}

function configure(z: ZoomBehavior<Element, unknown>, o: ZoomOptions): void {
  z.scaleExtent(o.scaleExtent);
  if (o.extent) z.extent(o.extent);
  if (o.translateExtent) z.translateExtent(o.translateExtent);
  z.on('zoom', (e: D3ZoomEvent<Element, unknown>) => o.onZoom({ k: e.transform.k, x: e.transform.x, y: e.transform.y }, !!e.sourceEvent));
}

export function zoomable(el: Element, options: ZoomOptions): ActionReturn<ZoomOptions> {
  const z = zoom<Element, unknown>();
  configure(z, options);
  // Double click opens a memory in both views; it must not zoom.
  select(el).call(z).on('dblclick.zoom', null);
  options.control.attach(el, z);
  return {
    update(next) {
      configure(z, next);
      next.control.attach(el, z);
    },
    destroy() {
      select(el).on('.zoom', null);
      options.control.detach();
    },
  };
}
