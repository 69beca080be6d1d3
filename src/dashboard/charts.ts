// Bar charts as server-rendered SVG: no script, no remote host, and styled by the dashboard's
// stylesheet (the Content-Security-Policy allows no inline style). Each chart has a title and a
// description for screen readers, and each bar its value as a tooltip.
import { html, type Html } from './html.ts';

export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 640;
const BAR_AREA = 150;
const LABEL_AREA = 40;

/** Vertical bars, one per label (e.g. per day), with the largest value marked on the axis. */
export function columnChart(title: string, bars: readonly Bar[], format: (value: number) => string = String): Html {
  const largest = Math.max(0, ...bars.map((bar) => bar.value));
  const max = Math.max(1, largest);
  const slot = WIDTH / Math.max(1, bars.length);
  const width = Math.max(1, slot * 0.7);
  const every = Math.ceil(bars.length / 8);
  const id = title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const total = bars.reduce((sum, bar) => sum + bar.value, 0);
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${BAR_AREA + LABEL_AREA}" role="img" aria-labelledby="${id}-title ${id}-desc" preserveAspectRatio="none">
      <title id="${id}-title">${title}</title>
      <desc id="${id}-desc">${bars.length} bars; largest ${format(largest)}; total ${format(total)}.</desc>
      <line class="axis" x1="0" y1="${BAR_AREA}" x2="${WIDTH}" y2="${BAR_AREA}" />
      ${bars.map((bar, i) => {
        const height = (bar.value / max) * (BAR_AREA - 12);
        const x = i * slot + (slot - width) / 2;
        return html`<rect class="bar" x="${x.toFixed(1)}" y="${(BAR_AREA - height).toFixed(1)}" width="${width.toFixed(1)}" height="${height.toFixed(1)}"><title>${bar.label}: ${format(bar.value)}</title></rect>
          ${i % every === 0 ? html`<text class="tick" x="${(i * slot + slot / 2).toFixed(1)}" y="${BAR_AREA + 26}" text-anchor="middle">${bar.label.slice(5)}</text>` : ''}`;
      })}
      <text class="tick" x="4" y="18">${format(largest)}</text>
    </svg>
    <figcaption>${title}</figcaption>
  </figure>`;
}

/** Horizontal bars, one per label (e.g. per endpoint), each with its value written beside it. */
export function barChart(title: string, bars: readonly Bar[], format: (value: number) => string = String): Html {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const row = 34;
  const height = Math.max(row, bars.length * row);
  const id = title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return html`<figure class="chart">
    <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title">
      <title id="${id}-title">${title}</title>
      ${bars.length === 0 ? html`<text class="tick" x="0" y="24">No requests in this span.</text>` : ''}
      ${bars.map((bar, i) => {
        const length = (bar.value / max) * (WIDTH * 0.45);
        return html`<text class="tick" x="0" y="${i * row + 23}">${bar.label}</text>
          <rect class="bar" x="${WIDTH * 0.42}" y="${i * row + 6}" width="${length.toFixed(1)}" height="${row - 12}"><title>${bar.label}: ${format(bar.value)}</title></rect>
          <text class="tick" x="${(WIDTH * 0.42 + length + 6).toFixed(1)}" y="${i * row + 23}">${format(bar.value)}</text>`;
      })}
    </svg>
    <figcaption>${title}</figcaption>
  </figure>`;
}

export const percent = (value: number): string => `${Math.round(value)}%`;
