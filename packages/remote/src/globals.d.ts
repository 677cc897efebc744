// This package runs in Node and in the browser and may use neither `node:*` nor the DOM, so it declares
// the web-standard global it relies on (present in Node >= 16 and in every browser).
declare function btoa(data: string): string;
