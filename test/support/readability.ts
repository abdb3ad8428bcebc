import type { Page } from 'playwright-core';

/**
 * Whether what the dashboard draws can be read, measured in the browser from the styles it computed
 * (WCAG 2.1's contrast ratio): text at least 4.5:1 on what is behind it (AA), and the marks that
 * carry a state without text (the timeline's attempts and bars) 3:1 (non-text contrast, 1.4.11).
 */

/** One pair measured: what, its two colours as the eye gets them (sRGB 0–255), their ratio, the least allowed. */
export interface Contrast {
  what: string;
  foreground: number[];
  background: number[];
  ratio: number;
  least: number;
}

export const TEXT_CONTRAST = 4.5;
export const MARK_CONTRAST = 3;

/**
 * Measures every status badge, graph node (its name and its note on its box), timeline row (its name,
 * each attempt's segment and the step's bar), child chip, list wait note and retry tag on the page.
 * A colour the page could not give (an unset variable draws black, or nothing) is measured as it is drawn.
 */
export function measureContrasts(page: Page): Promise<Contrast[]> {
  return page.evaluate(
    ({ text, mark }) => {
      // What this reads of the page's DOM (the project's TypeScript has no DOM library): the
      // function runs in the page, where globalThis is its window.
      interface Element {
        parentElement: Element | null;
        namespaceURI: string | null;
        textContent: string | null;
        getAttribute(name: string): string | null;
        querySelector(selector: string): Element | null;
        querySelectorAll(selector: string): Iterable<Element>;
      }
      type Style = Record<'color' | 'fill' | 'stroke' | 'backgroundColor' | 'opacity', string>;
      const { document, getComputedStyle } = globalThis as unknown as {
        document: { querySelectorAll(selector: string): Iterable<Element> };
        getComputedStyle(element: Element): Style;
      };
      const SVG = 'http://www.w3.org/2000/svg';
      type Rgba = [number, number, number, number];
      const parse = (value: string): Rgba | undefined => {
        const rgb = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(value.trim());
        if (rgb)
          return [Number(rgb[1]), Number(rgb[2]), Number(rgb[3]), rgb[4] === undefined ? 1 : Number(rgb[4])];
        const srgb = /^color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)(?: \/ ([\d.]+))?\)$/.exec(value.trim());
        if (srgb)
          return [
            Number(srgb[1]) * 255,
            Number(srgb[2]) * 255,
            Number(srgb[3]) * 255,
            srgb[4] === undefined ? 1 : Number(srgb[4]),
          ];
        return undefined;
      };
      const over = (top: Rgba, bottom: number[], alpha = 1): number[] =>
        bottom.map((channel, i) => (top[i] as number) * top[3] * alpha + channel * (1 - top[3] * alpha));
      /** What is behind an element: the backgrounds of its HTML ancestors, laid over the white canvas. */
      const backdrop = (element: Element): number[] => {
        const chain: Element[] = [];
        for (let at: Element | null = element; at; at = at.parentElement) chain.unshift(at);
        let colour = [255, 255, 255];
        for (const at of chain) {
          if (at.namespaceURI === SVG) continue;
          const background = parse(getComputedStyle(at).backgroundColor);
          if (background) colour = over(background, colour);
        }
        return colour;
      };
      /** The opacity an element is drawn with: its own times its ancestors'. */
      const opacity = (element: Element): number => {
        let product = 1;
        for (let at: Element | null = element; at; at = at.parentElement)
          product *= Number(getComputedStyle(at).opacity);
        return product;
      };
      const paint = (element: Element, property: 'color' | 'fill' | 'stroke' | 'backgroundColor') => {
        const value = getComputedStyle(element)[property];
        // `none`, a gradient: drawn as nothing, so as black text would be unreadable. Counted as black.
        return parse(value) ?? ([0, 0, 0, 1] as Rgba);
      };
      const luminance = (rgb: number[]) => {
        const [r, g, b] = rgb.map((channel) => {
          const c = channel / 255;
          return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        }) as [number, number, number];
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const ratio = (a: number[], b: number[]) => {
        const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
        return (high + 0.05) / (low + 0.05);
      };
      const results: {
        what: string;
        foreground: number[];
        background: number[];
        ratio: number;
        least: number;
      }[] = [];
      /** `fg` drawn over `bg` (or over the page behind `fg`), both faded by `fg`'s opacity. */
      const measure = (
        what: string,
        fg: Element,
        fgProperty: 'color' | 'fill' | 'stroke',
        bg: Element | undefined,
        bgProperty: 'fill' | 'backgroundColor',
        least: number,
      ) => {
        const behind = backdrop(bg ?? fg);
        const background = bg ? over(paint(bg, bgProperty), behind, opacity(bg)) : behind;
        const foreground = over(paint(fg, fgProperty), background, opacity(fg));
        results.push({ what, foreground, background, ratio: ratio(foreground, background), least });
      };
      const name = (element: Element) => (element.textContent ?? '').trim().slice(0, 60);
      for (const badge of document.querySelectorAll('.badge'))
        measure(`badge "${name(badge)}"`, badge, 'color', badge, 'backgroundColor', text);
      for (const chip of document.querySelectorAll('.child, .wait-note, .tag-retries, .tag-waiting'))
        measure(
          `${chip.getAttribute('class')} "${name(chip)}"`,
          chip,
          'color',
          chip,
          'backgroundColor',
          text,
        );
      for (const node of document.querySelectorAll('.graph .node')) {
        const box = node.querySelector('.node-box') ?? undefined;
        const step = node.getAttribute('data-step');
        for (const line of node.querySelectorAll('.node-label, .node-note'))
          measure(
            `node ${step} ${line.getAttribute('class')} "${name(line)}"`,
            line,
            'fill',
            box,
            'fill',
            text,
          );
      }
      for (const row of document.querySelectorAll('.timeline-row')) {
        const step = row.getAttribute('data-timeline-step');
        const hit = row.querySelector('.timeline-row-hit') ?? undefined;
        for (const label of row.querySelectorAll('.timeline-label, .timeline-none'))
          measure(`timeline ${step} "${name(label)}"`, label, 'fill', hit, 'fill', text);
        for (const segment of row.querySelectorAll('.timeline-segment'))
          measure(
            `timeline ${step} attempt ${segment.getAttribute('data-attempt')}`,
            segment,
            'fill',
            hit,
            'fill',
            mark,
          );
        for (const bar of row.querySelectorAll('.timeline-bar'))
          measure(`timeline ${step} bar`, bar, 'stroke', hit, 'fill', mark);
      }
      return results;
    },
    { text: TEXT_CONTRAST, mark: MARK_CONTRAST },
  );
}

/** The pairs below their least ratio, as lines that say which and how far. */
export function unreadable(contrasts: readonly Contrast[]): string[] {
  return contrasts
    .filter((contrast) => !(contrast.ratio >= contrast.least))
    .map(
      (contrast) =>
        `${contrast.what}: ${contrast.ratio.toFixed(2)}:1 (at least ${contrast.least}:1), rgb(${contrast.foreground.map(Math.round).join(',')}) on rgb(${contrast.background.map(Math.round).join(',')})`,
    );
}
