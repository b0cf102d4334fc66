#include "tools/replay_plot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace hdrf::tools {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out;
}

std::string Fmt(const char* f, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// 1.5M, 250k, 42
std::string Count(double v) {
  if (v >= 1e6) return Fmt("%gM", std::round(v / 1e4) / 100);
  if (v >= 1e3) return Fmt("%gk", std::round(v / 10) / 100);
  return Fmt("%g", v);
}

// A round step for about `ticks` ticks over [0, span].
double NiceStep(double span, int ticks) {
  if (!(span > 0)) return 1;
  const double raw = span / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

// Ten distinct colours (Tableau 10), then hues by the golden angle.
std::string Colour(size_t i) {
  static const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  if (i < 10) return kPalette[i];
  return Fmt("hsl(%.0f,65%%,45%%)", std::fmod(static_cast<double>(i) * 137.508, 360.0));
}

}  // namespace

void SharePlot::Sample(const Engine& engine) {
  const std::vector<QueueInfo> qs = engine.Queues();
  std::vector<std::string> names;
  std::vector<double> ys;
  for (const QueueInfo& q : qs)
    if (q.depth == 1) names.push_back(q.path), ys.push_back(q.share);
  if (names.empty())
    for (const QueueInfo& q : qs)
      if (q.depth == 0) names.push_back(q.path), ys.push_back(q.share);
  Add(engine.last_seq(), names, ys);
}

void SharePlot::Add(uint64_t x, const std::vector<std::string>& names, const std::vector<double>& ys) {
  const size_t k = xs_.size();
  xs_.push_back(x);
  for (auto& s : ys_) s.push_back(kNaN);
  for (size_t n = 0; n < names.size() && n < ys.size(); ++n) {
    size_t i = std::find(names_.begin(), names_.end(), names[n]) - names_.begin();
    if (i == names_.size()) {
      names_.push_back(names[n]);
      ys_.emplace_back(k + 1, kNaN);
    }
    ys_[i][k] = ys[n];
  }
}

std::string SharePlot::Svg(const std::string& title) const {
  // Layout: plot area on the left, legend on the right.
  const double W = 960, left = 70, top = 50, plot_w = 640, plot_h = 380;
  const double legend_x = left + plot_w + 30, row = 16;
  const size_t legend_rows = names_.size() + (markers_.empty() ? 0 : 1);
  const double H = std::max(top + plot_h + 60, top + 10 + row * static_cast<double>(legend_rows) + 20);
  uint64_t x0 = xs_.empty() ? 0 : xs_.front(), x1 = xs_.empty() ? 1 : xs_.back();
  if (x1 <= x0) x1 = x0 + 1;
  double ymax = 0;
  for (const auto& s : ys_)
    for (double y : s)
      if (std::isfinite(y)) ymax = std::max(ymax, y);
  const double ystep = NiceStep(ymax > 0 ? ymax : 1, 5);
  const double ytop = std::max(ystep, std::ceil(ymax / ystep - 1e-9) * ystep);
  auto px = [&](uint64_t x) { return left + plot_w * static_cast<double>(x - x0) / static_cast<double>(x1 - x0); };
  auto py = [&](double y) { return top + plot_h - plot_h * y / ytop; };

  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", W) + "\" height=\"" + Fmt("%.0f", H) +
       "\" viewBox=\"0 0 " + Fmt("%.0f", W) + " " + Fmt("%.0f", H) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + Fmt("%.0f", left) + "\" y=\"28\" font-size=\"16\" font-weight=\"bold\">" + Xml(title) +
       "</text>\n";
  // Grid, ticks and labels.
  s += "<g stroke=\"#ddd\" stroke-width=\"1\">\n";
  for (double y = 0; y <= ytop + 1e-12; y += ystep)
    s += "<line x1=\"" + Fmt("%.1f", left) + "\" y1=\"" + Fmt("%.1f", py(y)) + "\" x2=\"" + Fmt("%.1f", left + plot_w) +
         "\" y2=\"" + Fmt("%.1f", py(y)) + "\"/>\n";
  s += "</g>\n<g text-anchor=\"end\">\n";
  for (double y = 0; y <= ytop + 1e-12; y += ystep)
    s += "<text x=\"" + Fmt("%.1f", left - 6) + "\" y=\"" + Fmt("%.1f", py(y) + 4) + "\">" + Fmt("%g", y) + "</text>\n";
  s += "</g>\n<g text-anchor=\"middle\">\n";
  const double xstep = NiceStep(static_cast<double>(x1 - x0), 6);
  for (double x = std::ceil(static_cast<double>(x0) / xstep) * xstep; x <= static_cast<double>(x1) + 1e-9;
       x += xstep) {
    const double X = px(static_cast<uint64_t>(x));
    s += "<line x1=\"" + Fmt("%.1f", X) + "\" y1=\"" + Fmt("%.1f", top + plot_h) + "\" x2=\"" + Fmt("%.1f", X) +
         "\" y2=\"" + Fmt("%.1f", top + plot_h + 5) + "\" stroke=\"black\"/>\n";
    s += "<text x=\"" + Fmt("%.1f", X) + "\" y=\"" + Fmt("%.1f", top + plot_h + 18) + "\">" + Count(x) + "</text>\n";
  }
  s += "</g>\n";
  // Axes and their titles.
  s += "<path d=\"M" + Fmt("%.1f", left) + "," + Fmt("%.1f", top) + " V" + Fmt("%.1f", top + plot_h) + " H" +
       Fmt("%.1f", left + plot_w) + "\" fill=\"none\" stroke=\"black\"/>\n";
  s += "<text x=\"" + Fmt("%.1f", left + plot_w / 2) + "\" y=\"" + Fmt("%.1f", top + plot_h + 40) +
       "\" text-anchor=\"middle\">" + Xml(x_label_) + "</text>\n";
  s += "<text transform=\"translate(18," + Fmt("%.1f", top + plot_h / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + Xml(y_label_) + "</text>\n";
  // One polyline per queue (a gap where the queue was absent).
  for (size_t i = 0; i < names_.size(); ++i) {
    std::string pts;
    auto flush = [&] {
      if (!pts.empty())
        s += "<polyline fill=\"none\" stroke=\"" + Colour(i) + "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
      pts.clear();
    };
    s += "<g><title>" + Xml(names_[i]) + "</title>\n";
    for (size_t k = 0; k < xs_.size(); ++k) {
      if (!std::isfinite(ys_[i][k])) {
        if (!connect_gaps_) flush();
        continue;
      }
      if (!pts.empty()) pts += ' ';
      pts += Fmt("%.1f", px(xs_[k])) + "," + Fmt("%.1f", py(ys_[i][k]));
    }
    flush();
    s += "</g>\n";
  }
  // Markers: one tick per pixel column that holds one or more, rising from
  // the x axis (one path, however many instants).
  const char* marker_colour = "#d62728";
  if (!markers_.empty()) {
    std::vector<long> cols;
    for (uint64_t m : markers_) cols.push_back(std::lround(px(std::clamp(m, x0, x1))));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    std::string d;
    for (long c : cols)
      d += (d.empty() ? "M" : " M") + std::to_string(c) + "," + Fmt("%.1f", top + plot_h) + " v-10";
    s += "<g class=\"markers\"><title>" + Xml(marker_legend_) + "</title>\n<path d=\"" + d +
         "\" fill=\"none\" stroke=\"" + marker_colour + "\" stroke-width=\"1\"/>\n</g>\n";
  }
  // Legend.
  s += "<g>\n";
  for (size_t i = 0; i < names_.size(); ++i) {
    const double y = top + 10 + row * static_cast<double>(i);
    s += "<rect x=\"" + Fmt("%.1f", legend_x) + "\" y=\"" + Fmt("%.1f", y - 9) + "\" width=\"18\" height=\"4\" fill=\"" +
         Colour(i) + "\"/>";
    s += "<text x=\"" + Fmt("%.1f", legend_x + 24) + "\" y=\"" + Fmt("%.1f", y) + "\">" + Xml(names_[i]) + "</text>\n";
  }
  if (!markers_.empty()) {
    const double y = top + 10 + row * static_cast<double>(names_.size());
    s += "<path d=\"M" + Fmt("%.1f", legend_x + 9) + "," + Fmt("%.1f", y - 1) + " v-10\" stroke=\"" + marker_colour +
         "\" stroke-width=\"1\"/>";
    s += "<text x=\"" + Fmt("%.1f", legend_x + 24) + "\" y=\"" + Fmt("%.1f", y) + "\">" + Xml(marker_legend_) +
         "</text>\n";
  }
  s += "</g>\n</svg>\n";
  return s;
}

namespace {
Status WriteAtomically(const std::string& path, const std::string& svg) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::IoError("plot " + tmp + ": cannot create: " + std::strerror(errno));
  const bool ok = std::fwrite(svg.data(), 1, svg.size(), f) == svg.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return Status::IoError("plot " + tmp + ": cannot write: " + std::strerror(ok ? errno : err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return Status::IoError("plot " + path + ": cannot rename " + tmp + " into place: " + std::strerror(e));
  }
  return Status::Ok();
}

// The value of the first `attr="..."` of an SVG document, as a number.
double Attr(const std::string& svg, const std::string& attr) {
  const size_t at = svg.find(" " + attr + "=\"");
  return at == std::string::npos ? 0 : std::atof(svg.c_str() + at + attr.size() + 3);
}
}  // namespace

Status SharePlot::Write(const std::string& path, const std::string& title) const {
  return WriteAtomically(path, Svg(title));
}

Status WriteStackedSvg(const std::string& path, const std::vector<std::string>& svgs) {
  double width = 0, height = 0;
  std::string body;
  for (const std::string& svg : svgs) {
    const size_t start = svg.find("<svg");
    std::string inner = svg.substr(start == std::string::npos ? 0 : start);
    body += "<svg y=\"" + Fmt("%.0f", height) + "\"" + inner.substr(4);
    width = std::max(width, Attr(svg, "width"));
    height += Attr(svg, "height");
  }
  return WriteAtomically(path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                                   Fmt("%.0f", width) + "\" height=\"" + Fmt("%.0f", height) + "\">\n" + body +
                                   "</svg>\n");
}

Status CheckPlotPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("flag --plot: empty file name");
  if (path.back() == '/') return Status::InvalidArgument("flag --plot: '" + path + "' names a directory");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::InvalidArgument("flag --plot: directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    return Status::InvalidArgument("flag --plot: directory '" + dir + "' is not writable");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::InvalidArgument("flag --plot: '" + path + "' is a directory");
  return Status::Ok();
}

}  // namespace hdrf::tools
