/**
 * What the d3 charts share (the dashboard's curves, the credit bars): the SVG namespace, and a
 * left axis with its rotated label.
 */
import { axisLeft, format, type ScaleLinear, type Selection } from 'd3';

export const SVG = 'http://www.w3.org/2000/svg';

/** Where a left axis goes: the axis at x = `left`, its label at x = `labelX`, centred between `top` and `bottom`. */
export interface YAxisPlace {
  left: number;
  labelX: number;
  top: number;
  bottom: number;
}

const exponent = format('.1~e');

/**
 * The text of a y axis's ticks (about `count` of them): d3's for the scale (as many decimals as the
 * step between ticks needs); with ticks under 0.01 apart, the exponent form wherever it is shorter
 * ("4e−4" for "0.0004", "0" for "0.0000"), so a tick label stays a few characters wide.
 */
export function yTickFormat(y: ScaleLinear<number, number>, count = 5): (v: number) => string {
  const plain = y.tickFormat(count);
  const ticks = y.ticks(count);
  const small = ticks.length > 1 && Math.abs(ticks[1] - ticks[0]) < 0.01;
  return (v) => {
    const s = plain(v);
    if (!small) return s;
    if (v === 0) return '0';
    const e = exponent(v);
    return e.length < s.length ? e : s;
  };
}

/** Tick text's font size (media/dashboard.css `.curve-chart .axis text`), and a wide glyph's width in it. */
const TICK_PX = 11;
const TICK_CHAR = 0.62 * TICK_PX;

/**
 * The x of a left axis that leaves room for its widest tick label (yTickFormat's text, drawn
 * right-aligned 9 px left of the axis: d3's tick and padding) between the axis and a rotated label
 * centred at `labelX` (`labelPx` tall): at least `min`. Widths are estimated from the text's length,
 * a digit's width at the tick size, so that the layout is the same before anything is on screen.
 */
export function yAxisLeft(y: ScaleLinear<number, number>, labelX: number, min: number, labelPx = 12): number {
  const fmt = yTickFormat(y);
  const widest = Math.max(0, ...y.ticks(5).map((v) => fmt(v).length)) * TICK_CHAR;
  return Math.max(min, Math.ceil(labelX + labelPx / 2 + 4 + widest + 9));
}

/** Append a left axis (`g.axis.y-axis`, about 5 ticks, yTickFormat's text) and its label (`text.axis-label.y-label`) to a chart. */
export function drawYAxis(
  root: Selection<SVGSVGElement, unknown, null, undefined>,
  y: ScaleLinear<number, number>,
  at: YAxisPlace,
  label: string,
): void {
  root
    .append('g')
    .attr('class', 'axis y-axis')
    .attr('transform', `translate(${at.left},0)`)
    .call(
      axisLeft(y)
        .ticks(5)
        .tickFormat((v) => yTickFormat(y)(Number(v))),
    );
  root
    .append('text')
    .attr('class', 'axis-label y-label')
    .attr('transform', `translate(${at.labelX},${(at.top + at.bottom) / 2}) rotate(-90)`)
    .attr('text-anchor', 'middle')
    .text(label);
}

/** Append a chart's x-axis label (`text.axis-label.x-label`), centred between `left` and `right`, its baseline at `y`. */
export function drawXLabel(
  root: Selection<SVGSVGElement, unknown, null, undefined>,
  at: { left: number; right: number; y: number },
  label: string,
): void {
  root
    .append('text')
    .attr('class', 'axis-label x-label')
    .attr('x', (at.left + at.right) / 2)
    .attr('y', at.y)
    .attr('text-anchor', 'middle')
    .text(label);
}
