// A Svelte action for rendered replies: each table goes into a box that scrolls sideways, so a
// wide table on a phone scrolls instead of breaking every word. The box is focusable (keyboard
// users can scroll it) and named for screen readers. Runs after each render of the reply's HTML.
export function scrollTables(node: HTMLElement, _html: string) {
  const wrap = () => {
    for (const table of node.querySelectorAll('table')) {
      if (table.parentElement?.classList.contains('table-scroll')) continue;
      const box = document.createElement('div');
      box.className = 'table-scroll';
      box.tabIndex = 0;
      box.setAttribute('role', 'region');
      box.setAttribute('aria-label', 'Table (scrolls sideways)');
      table.replaceWith(box);
      box.append(table);
    }
  };
  wrap();
  return { update: wrap };
}
