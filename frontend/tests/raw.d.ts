// Vite's `?raw` imports: a file's text, used to share test vectors with the Python suite.
declare module "*?raw" {
  const text: string;
  export default text;
}
