// Bar charts as server-rendered SVG: no script, no remote host, and styled by the dashboard's
// stylesheet (the Content-Security-Policy allows no inline style). Each chart has a title and a
// description for screen readers, and each bar its value as a tooltip. Every label is drawn
// inside the chart, and a share is drawn on a scale of 0 to 100%.
import { html, type Html } from './html.ts';

export interface Bar {
  label: string;
  value: number;
}

export interface ChartOptions {
  format?: (value: number) => string;
  /** The value of a full bar: by default the largest one (at least 1). */
  max?: number;
  /** Whether the values add up to a total worth telling (not for shares). */
  total?: boolean;
}

export const percent = (value: number): string => `${Math.round(value)}%`;

/** A share in percent: a full bar is 100%, and shares do not add up. */
export const SHARE: ChartOptions = { format: percent, max: 100, total: false };

const WIDTH = 640;
const BAR_AREA = 150;
const LABEL_AREA = 40;
/** Room on each side of the bars: a day's label is centred under its bar, and may be wider. */
const SIDE = 40;
/** Room right of a horizontal bar for its value. */
const VALUE_ROOM = 80;

const idOf = (title: string): string => title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
const scaleOf = (bars: readonly Bar[], max: number | undefined): number => max ?? Math.max(1, ...bars.map((bar) => bar.value));

/** Vertical bars, one per label (e.g. per day), with the value of a full bar marked on the axis. */
export function columnChart(title: string, bars: readonly Bar[], { format = String, max, total = true }: ChartOptions = {}): Html {
  const largest = Math.max(0, ...bars.map((bar) => bar.value));
  const scale = scaleOf(bars, max);
  const slot = (WIDTH - 2 * SIDE) / Math.max(1, bars.length);
  const width = Math.max(1, slot * 0.7);
  const every = Math.ceil(bars.length / 8);
  const id = idOf(title);
  const sum = bars.reduce((amount, bar) => amount + bar.value, 0);
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${BAR_AREA + LABEL_AREA}" role="img" aria-labelledby="${id}-title ${id}-desc">
      <title id="${id}-title">${title}</title>
      <desc id="${id}-desc">${bars.length} bars; largest ${format(largest)}${total ? `; total ${format(sum)}` : ''}.</desc>
      <line class="axis" x1="0" y1="${BAR_AREA}" x2="${WIDTH}" y2="${BAR_AREA}" />
      ${bars.map((bar, i) => {
        const height = (Math.min(bar.value, scale) / scale) * (BAR_AREA - 30);
        const x = SIDE + i * slot + (slot - width) / 2;
        return html`<rect class="bar" x="${x.toFixed(1)}" y="${(BAR_AREA - height).toFixed(1)}" width="${width.toFixed(1)}" height="${height.toFixed(1)}"><title>${bar.label}: ${format(bar.value)}</title></rect>
          ${i % every === 0 ? html`<text class="tick" x="${(SIDE + i * slot + slot / 2).toFixed(1)}" y="${BAR_AREA + 26}" text-anchor="middle">${bar.label.slice(5)}</text>` : ''}`;
      })}
      <text class="tick" x="4" y="22">${format(scale)}</text>
    </svg>
    <figcaption>${title}</figcaption>
  </figure>`;
}

/** Horizontal bars, one per label (e.g. per endpoint): the label above its bar, the value beside it. */
export function barChart(title: string, bars: readonly Bar[], { format = String, max }: ChartOptions = {}): Html {
  const scale = scaleOf(bars, max);
  const row = 56;
  const height = Math.max(row, bars.length * row);
  const id = idOf(title);
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title">
      <title id="${id}-title">${title}</title>
      ${bars.length === 0 ? html`<text class="tick" x="0" y="24">No requests in this span.</text>` : ''}
      ${bars.map((bar, i) => {
        const length = (Math.min(bar.value, scale) / scale) * (WIDTH - VALUE_ROOM);
        return html`<text class="tick" x="0" y="${i * row + 20}">${bar.label}</text>
          <rect class="bar" x="0" y="${i * row + 28}" width="${length.toFixed(1)}" height="20"><title>${bar.label}: ${format(bar.value)}</title></rect>
          <text class="tick" x="${(length + 8).toFixed(1)}" y="${i * row + 45}">${format(bar.value)}</text>`;
      })}
    </svg>
    <figcaption>${title}</figcaption>
  </figure>`;
}
