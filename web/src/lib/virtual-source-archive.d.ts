// The module the source-archive plugin in web/vite.config.ts generates at build time:
// the project's source archive beside the pages (web/tools/source-archive.mjs).
declare module 'virtual:source-archive' {
  export const sourceArchive: {
    /** Its URL from any page of the site (they all sit at the root). */
    href: string;
    /** attention-anatomy-source.tar.gz */
    name: string;
    /** Its size as the site says it: "1.9 MB". */
    size: string;
  };
}
