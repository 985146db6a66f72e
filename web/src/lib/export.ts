// Saving what a widget shows: PNG from a canvas, SVG from markup.

/** Offers `blob` to the user as a download called `filename`. */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadCanvasPng(canvas: HTMLCanvasElement, filename: string): void {
  canvas.toBlob((blob) => {
    if (blob) download(blob, filename);
  }, 'image/png');
}

export function downloadSvg(svg: string, filename: string): void {
  download(new Blob([svg], { type: 'image/svg+xml' }), filename);
}

/** Escapes text for use inside SVG/XML. */
export function xmlEscape(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}
