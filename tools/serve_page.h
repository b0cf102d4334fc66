// The web page of `hdrf serve` at /: one self-contained HTML document
// (inline CSS and JavaScript, no external resources) that polls
// /api/queues and /api/history every second and draws the queue tree and a
// usage-share sparkline per top-level queue.
#ifndef HDRF_TOOLS_SERVE_PAGE_H_
#define HDRF_TOOLS_SERVE_PAGE_H_

namespace hdrf::tools {

const char* ServePageHtml();

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_PAGE_H_
