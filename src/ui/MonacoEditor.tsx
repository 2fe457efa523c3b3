import { useEffect, useRef } from 'react';
import { monaco } from './monaco';

interface MonacoEditorProps {
  value: string;
  language: 'javascript' | 'json';
  onChange: (value: string) => void;
  label: string;
  readOnly?: boolean;
}

/** A controlled Monaco editor: external value changes replace the text, edits flow out. */
export function MonacoEditor({ value, language, onChange, label, readOnly }: MonacoEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor is created once; value syncs below.
  useEffect(() => {
    if (!host.current) return;
    const instance = monaco.editor.create(host.current, {
      value,
      language,
      readOnly: readOnly ?? false,
      theme: 'vs-dark',
      minimap: { enabled: false },
      fontSize: 13,
      automaticLayout: true,
      scrollBeyondLastLine: false,
      tabSize: 2,
      ariaLabel: label,
    });
    instance.onDidChangeModelContent(() => onChangeRef.current(instance.getValue()));
    editor.current = instance;
    return () => instance.dispose();
  }, []);

  useEffect(() => {
    const instance = editor.current;
    if (instance && instance.getValue() !== value) instance.setValue(value);
  }, [value]);

  return <div className="editor" ref={host} data-testid={`editor-${label}`} />;
}
