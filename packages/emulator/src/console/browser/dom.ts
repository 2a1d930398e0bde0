// Elements are built with text nodes only: a receiver's answer can never become markup.

/** The page's element with this id; the page is ours, so a missing one is a bug. */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id)
  if (!node) throw new Error(`the console page has no #${id}`)
  return node as T
}

/** What `el` sets: `text` as a text node, `onclick` as a listener, the rest as attributes. */
export type Attributes = {
  text?: string
  onclick?: (event: Event) => void
} & Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>

/** A child of `el`: a node, a text, or nothing. */
export type Child = Node | string | null | undefined

/** An element with attributes and children, never parsed from markup. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attributes | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (key === 'text') node.textContent = String(value)
    else if (key === 'onclick' && typeof value === 'function') node.addEventListener('click', value)
    else if (value !== undefined && value !== null && value !== false) {
      node.setAttribute(key, value === true ? '' : String(value))
    }
  }
  for (const child of children) {
    if (child === null || child === undefined) continue
    node.append(typeof child === 'string' ? document.createTextNode(child) : child)
  }
  return node
}

/** Replaces the children of `node` (nulls left out). */
export function fill(node: Element, ...children: (Node | null)[]): void {
  node.replaceChildren(...children.filter((child): child is Node => child !== null))
}

/** The value of the form control with this id. */
export const fieldValue = (id: string): string => $<HTMLInputElement | HTMLSelectElement>(id).value
