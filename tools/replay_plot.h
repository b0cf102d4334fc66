// hdrf replay --plot FILE.svg: samples each top-level queue's dominant share
// during a replay (through Engine::Queues()) and draws them as an SVG line
// chart (docs/trace.md "The share plot").
#ifndef HDRF_TOOLS_REPLAY_PLOT_H_
#define HDRF_TOOLS_REPLAY_PLOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/status.h"

namespace hdrf::tools {

class SharePlot {
 public:
  // One sample: x = engine.last_seq(), y = the dominant share of every queue
  // directly under root (root itself when it has no children). Takes the
  // engine's lock once (Queues()).
  void Sample(const Engine& engine);
  // One sample at x (non-decreasing): ys[i] is the value of series
  // names[i] (NaN: absent); a name not seen before starts a series.
  void Add(uint64_t x, const std::vector<std::string>& names, const std::vector<double>& ys);
  // Axis titles (defaults: the replay's event axis and dominant share).
  void set_labels(std::string x, std::string y) {
    x_label_ = std::move(x);
    y_label_ = std::move(y);
  }
  // Draw each series through the samples where it is absent (default: a gap).
  void set_connect_gaps(bool on) { connect_gaps_ = on; }
  // Instants to mark with short ticks along the x axis (e.g. the evictions
  // of hdrf simulate --reclaim), with a legend entry `legend`; drawn only
  // when `xs` is non-empty. Instants outside the samples' range are drawn
  // at its nearer end.
  void set_markers(std::vector<uint64_t> xs, std::string legend) {
    markers_ = std::move(xs);
    marker_legend_ = std::move(legend);
  }
  size_t samples() const { return xs_.size(); }
  const std::vector<std::string>& names() const { return names_; }

  // A self-contained SVG document: title, axes with ticks, a line per queue,
  // a legend.
  std::string Svg(const std::string& title) const;
  // Writes Svg(title) to `path` through `path`.tmp and a rename.
  Status Write(const std::string& path, const std::string& title) const;

 private:
  std::vector<std::string> names_;         // series, in order of first appearance
  std::vector<uint64_t> xs_;               // per sample
  std::vector<std::vector<double>> ys_;    // per series, per sample (NaN: absent)
  std::string x_label_ = "event (engine sequence number)", y_label_ = "dominant share";
  bool connect_gaps_ = false;
  std::vector<uint64_t> markers_;
  std::string marker_legend_;
};

// Writes SVG documents (as SharePlot::Svg returns them) stacked vertically
// as one document to `path`, through `path`.tmp and a rename.
Status WriteStackedSvg(const std::string& path, const std::vector<std::string>& svgs);

// Checks before a run that `path` can be written later: a non-empty name
// whose directory exists. The message says what is wrong.
Status CheckPlotPath(const std::string& path);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_REPLAY_PLOT_H_
