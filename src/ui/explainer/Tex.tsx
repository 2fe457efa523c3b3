// One KaTeX formula. The TeX is built by the explainer from numbers, never from user text,
// so injecting KaTeX's HTML is safe.
import katex from 'katex';
import 'katex/dist/katex.min.css';
import { useMemo } from 'react';

export function Tex({ tex, display = false }: { tex: string; display?: boolean }) {
  const html = useMemo(
    () => katex.renderToString(tex, { displayMode: display, throwOnError: false }),
    [tex, display],
  );
  const Tag = display ? 'div' : 'span';
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX output of TeX built from numbers.
  return <Tag className="tex" dangerouslySetInnerHTML={{ __html: html }} />;
}
