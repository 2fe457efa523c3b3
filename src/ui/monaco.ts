// Monaco, trimmed to what the lab uses: the core editor, a few editing contributions,
// and JavaScript/JSON highlighting. The full bundle is ~4× larger and slows first paint.
import * as monaco from 'monaco-editor/editor/editor.api';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import 'monaco-editor/editor/contrib/bracketMatching/browser/bracketMatching';
import 'monaco-editor/editor/contrib/comment/browser/comment';
import 'monaco-editor/editor/contrib/folding/browser/folding';
import 'monaco-editor/editor/contrib/hover/browser/hoverContribution';
import 'monaco-editor/features/find/register';
import 'monaco-editor/languages/definitions/javascript/register';

self.MonacoEnvironment = { getWorker: () => new EditorWorker() };

monaco.languages.register({ id: 'json', extensions: ['.json'] });

export { monaco };
