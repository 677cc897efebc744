/** True in a vite build (the app registers its service worker), false under the dev server. */
declare const __SERVICE_WORKER__: boolean;
