// The model picker: turns the server's fixpoint.listModels reply into
// quick-pick items. No vscode import.

/** fixpoint.listModels' reply. */
export interface ModelList {
  models: string[];
  current: string;
  baseUrl: string;
}

/** A quick-pick item; value is what fixpoint.model is set to ('' = the server default). */
export interface ModelItem {
  label: string;
  description?: string;
  value: string;
}

/** Validates the reply; undefined when it is not a model list. */
export function parseModelList(v: unknown): ModelList | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const p = v as Record<string, unknown>;
  if (!Array.isArray(p.models)) return undefined;
  const models = [...new Set(p.models.filter((m): m is string => typeof m === 'string' && m.trim() !== '').map((m) => m.trim()))].sort();
  return { models, current: typeof p.current === 'string' ? p.current : '', baseUrl: typeof p.baseUrl === 'string' ? p.baseUrl : '' };
}

/**
 * The picker's items: the model set in fixpoint.model first (marked), then
 * the endpoint's models, then "server default" (clears the setting). A
 * configured model the endpoint does not list is kept, marked so.
 */
export function modelItems(list: ModelList, setting: string): ModelItem[] {
  const items: ModelItem[] = [];
  const names = setting && !list.models.includes(setting) ? [setting, ...list.models] : list.models;
  for (const m of names) {
    let description: string | undefined;
    if (m === setting) description = list.models.includes(m) ? 'current setting' : 'current setting · not listed by the endpoint';
    else if (!setting && m === list.current) description = 'server default';
    const item: ModelItem = { label: m, value: m };
    if (description) item.description = description;
    if (m === setting) items.unshift(item);
    else items.push(item);
  }
  items.push({ label: 'Server default', description: list.current ? `clears fixpoint.model (now ${list.current})` : 'clears fixpoint.model', value: '' });
  return items;
}
