#include "hdrf/config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "api/config/yaml_fields.h"
#include "hdrf/input_file.h"

namespace hdrf {
using namespace config;  // the forms and their shared readers (yaml_fields.h)
namespace {

// ---------------------------------------------------------------------------
// Documents and detection.

enum class DocKind { kScenario, kVolcanoQueue, kNestedRoot, kHierarchicalQueue, kCluster, kList };

const char* kScenarioKeys[] = {"cluster", "queues", "jobs", "steps", "overcommitFactor"};

StatusOr<DocKind> Detect(const Reporter& rep, const MapView& m) {
  if (const Field* k = m.Get("kind")) {
    HDRF_ASSIGN_OR_RETURN(std::string kind, GetString(rep, *k, "", false));
    if (kind == "Queue") {
      if (const Field* spec = m.Get("spec"); spec && spec->value.IsMap() && spec->value["hierarchy"]) {
        return DocKind::kNestedRoot;
      }
      return DocKind::kVolcanoQueue;
    }
    if (kind == "HierarchicalQueue") return DocKind::kHierarchicalQueue;
    if (kind == "Cluster") return DocKind::kCluster;
    if (kind == "List") return DocKind::kList;
    return rep.Error(k->ValueLine(), "",
                     "unknown kind '" + kind +
                         "' (expected Queue, HierarchicalQueue, Cluster or List, or a scenario "
                         "without kind)");
  }
  for (const char* key : kScenarioKeys) {
    if (m.Has(key)) return DocKind::kScenario;
  }
  return rep.Error(m.line(), "",
                   "cannot tell what this document is: expected a Volcano Queue (kind: Queue), "
                   "kind: HierarchicalQueue, kind: Cluster, or a scenario (cluster, queues, jobs, "
                   "steps)");
}

// ---------------------------------------------------------------------------
// Loading documents.
//
// yaml-cpp 0.7 is not used through YAML::LoadAll: it loops forever (and
// allocates without bound) on a document that starts with a token it cannot
// place, such as a ',' outside a flow collection (yaml-cpp issue #1040, fixed
// upstream after 0.8). YAML::Load, for its part, silently drops whatever
// follows the first document ("[1]\n[2]" loads as [1]). So the text is split
// into documents at the `---` / `...` markers (which YAML forbids inside
// content), each document is first run through the event parser to check
// that it holds exactly one document, and then loaded (a document whose top
// is a block map needs no such check: TopIsBlockMap). Line numbers stay
// those of the whole text: each document's Reporter carries its offset.

struct Chunk {
  std::string text;
  int first_line = 0;  // 0-based line of the whole text where `text` starts
};

std::string_view StripEol(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

bool IsMarker(std::string_view line, std::string_view marker) {
  return line.substr(0, 3) == marker &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
}

// A line that holds no content: blank, a comment or a directive.
bool IsTrivia(std::string_view line) {
  const size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return true;
  return line[i] == '#' || (i == 0 && line[0] == '%');
}

std::vector<Chunk> SplitDocuments(std::string_view text) {
  std::vector<Chunk> out;
  Chunk cur;
  bool started = false;  // `cur` has a `---` marker or content
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view raw = text.substr(pos, end - pos);
    const std::string_view line = StripEol(raw);
    if (IsMarker(line, "---")) {
      if (started) {
        out.push_back(std::move(cur));
        cur = Chunk{};
        cur.first_line = line_no;
      }
      // Directives and comments before the marker stay with its document.
      started = true;
      cur.text += raw;
    } else if (IsMarker(line, "...")) {
      cur.text += raw;
      out.push_back(std::move(cur));
      cur = Chunk{};
      cur.first_line = line_no + 1;
      started = false;
    } else {
      cur.text += raw;
      started = started || !IsTrivia(line);
    }
    pos = end;
    ++line_no;
  }
  if (!cur.text.empty()) out.push_back(std::move(cur));
  return out;
}

// Thrown by FirstMark where a map or list opens inside kMaxYamlDepth others.
struct TooDeep {
  YAML::Mark mark;
};

// Records the mark of the first event of a document; throws TooDeep at the
// first map or list nested deeper than kMaxYamlDepth (before yaml-cpp's own
// recursion limit, whose message names no line).
class FirstMark : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> mark;

  void OnDocumentStart(const YAML::Mark& m) override { Note(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { Note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Note(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Note(m);
    Enter(m);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Note(m);
    Enter(m);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& m) {
    if (++depth_ > kMaxYamlDepth) throw TooDeep{m};
  }
  int depth_ = 0;
  void Note(const YAML::Mark& m) {
    if (!mark && !m.is_null()) mark = m;
  }
};

// A ParserException of a document starting at `first_line` (0-based).
Status MalformedYaml(const Reporter& rep, const YAML::Exception& e, int first_line) {
  const int line = e.mark.is_null() ? first_line + 1 : e.mark.line + 1 + first_line;
  return rep.Error(line, "", "malformed YAML: " + e.msg);
}

struct LoadedDoc {
  YAML::Node node;
  Reporter rep;  // knows the document's line offset
};

// YAML text holds no control character but tab, CR and LF (YAML 1.2
// §5.1); yaml-cpp would read a NUL as something else.
Status CheckControlBytes(const Reporter& rep, std::string_view text) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", c);
      return rep.Error(line, "", std::string("a control character (byte ") + buf + ") at column " +
                                     std::to_string(i - line_start + 1) + "; YAML text cannot hold one");
    }
  }
  return Status::Ok();
}

Status TooDeepError(const Reporter& rep, const YAML::Mark& mark, int first_line) {
  return rep.Error(mark.line + 1 + first_line, "",
                   "YAML nested too deeply: a map or list inside " + std::to_string(kMaxYamlDepth) +
                       " others (at most " + std::to_string(kMaxYamlDepth) + " levels)");
}

// Whether a document's content starts with a plain key at column 0 (after
// blank, comment and directive lines and a bare `---`): a block map at the
// top, which runs to the end of the document — whatever follows belongs to
// it or is a syntax error —, so YAML::Load alone cannot drop a second
// document and the event pass, which doubles the parse time (10^5 queues:
// about 1 s of 3; issue 26 item 14), is not needed.
bool TopIsBlockMap(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line =
        StripEol(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (IsTrivia(line) || (IsMarker(line, "---") && IsTrivia(line.substr(3)))) continue;
    const unsigned char c = static_cast<unsigned char>(line[0]);
    if (!(std::isalnum(c) || c == '_')) return false;
    const size_t colon = line.find(':');
    return colon != std::string_view::npos &&
           (colon + 1 == line.size() || line[colon + 1] == ' ' || line[colon + 1] == '\t');
  }
  return false;
}

// The mark of the first map or list (document order) nested inside
// kMaxYamlDepth others, as FirstMark finds it on the events; `depth` is
// `n`'s. An alias cycle ends here too, at the cap.
std::optional<YAML::Mark> TooDeepNode(const YAML::Node& n, int depth) {
  if (!n.IsMap() && !n.IsSequence()) return std::nullopt;
  if (depth > kMaxYamlDepth) return n.Mark();
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (n.IsMap()) {
      if (auto m = TooDeepNode(it->first, depth + 1)) return m;
      if (auto m = TooDeepNode(it->second, depth + 1)) return m;
    } else if (auto m = TooDeepNode(*it, depth + 1)) {
      return m;
    }
  }
  return std::nullopt;
}

// The non-empty documents of `text`, each a map.
StatusOr<std::vector<LoadedDoc>> LoadDocs(const Reporter& rep, std::string_view text) {
  HDRF_RETURN_IF_ERROR(CheckControlBytes(rep, text));
  std::vector<LoadedDoc> out;
  for (const Chunk& c : SplitDocuments(text)) {
    const Reporter doc_rep = rep.ForDocument(c.first_line);
    YAML::Node node;
    try {
      if (TopIsBlockMap(c.text)) {
        node = YAML::Load(c.text);
        if (auto deep = TooDeepNode(node, 1)) throw TooDeep{*deep};
      } else {
        std::istringstream in(c.text);
        YAML::Parser parser(in);
        FirstMark first, second;
        if (!parser.HandleNextDocument(first)) continue;  // comments only
        if (parser.HandleNextDocument(second)) {
          const int line = second.mark ? second.mark->line + 1 + c.first_line : c.first_line + 1;
          return rep.Error(line, "",
                           "malformed YAML: unexpected content here (it does not belong to the "
                           "document above; a document marker '---' missing?)");
        }
        node = YAML::Load(c.text);
      }
    } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own limit, deeper than ours
      return TooDeepError(rep, e.mark, c.first_line);
    } catch (const YAML::Exception& e) {
      return MalformedYaml(rep, e, c.first_line);
    } catch (const TooDeep& e) {
      return TooDeepError(rep, e.mark, c.first_line);
    }
    if (node.IsNull()) continue;
    if (!node.IsMap()) {
      return rep.Error(doc_rep.LineOf(node, c.first_line + 1), "",
                       "a document must be a map, got " + Describe(node));
    }
    out.push_back(LoadedDoc{node, doc_rep});
  }
  if (out.empty()) return rep.Error(1, "", "no YAML document (the file is empty)");
  return out;
}

// ---------------------------------------------------------------------------
// Queue configurations and scenarios.

struct Doc {
  DocKind kind;
  MapView map;
  Reporter rep;
};

StatusOr<QueueConfig> ParseQueueConfigImpl(const Reporter& rep, std::string_view text) {
  HDRF_ASSIGN_OR_RETURN(std::vector<LoadedDoc> loaded, LoadDocs(rep, text));
  std::vector<Doc> docs;
  for (const LoadedDoc& ld : loaded) {
    const Reporter& drep = ld.rep;
    HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(drep, ld.node, 1, "", "a document"));
    HDRF_ASSIGN_OR_RETURN(DocKind kind, Detect(drep, m));
    if (kind == DocKind::kList) {
      const Field* items = m.Get("items");
      if (items == nullptr || items->value.IsNull()) continue;
      if (!items->value.IsSequence()) {
        return drep.Error(items->ValueLine(), "", "items must be a list, got " + Describe(items->value));
      }
      for (const YAML::Node& item : items->value) {
        HDRF_ASSIGN_OR_RETURN(MapView im, MapView::Make(drep, item, items->line, "", "a List item"));
        HDRF_ASSIGN_OR_RETURN(DocKind ik, Detect(drep, im));
        if (ik != DocKind::kVolcanoQueue && ik != DocKind::kNestedRoot) {
          return drep.Error(im.line(), "", "List items must be Queue objects");
        }
        docs.push_back(Doc{ik, std::move(im), drep});
      }
      continue;
    }
    docs.push_back(Doc{kind, std::move(m), drep});
  }

  for (const Doc& d : docs) {
    if (d.kind != DocKind::kScenario) continue;
    if (docs.size() > 1) {
      const Doc& other = &d == &docs[0] ? docs[1] : docs[0];
      return rep.Error(other.map.line(), "",
                       "a scenario must be the only document of its file (scenario at line " +
                           std::to_string(d.map.line()) + ")");
    }
    HDRF_ASSIGN_OR_RETURN(Scenario sc, ParseScenarioDoc(d.rep, d.map));
    QueueConfig cfg;
    cfg.cluster = std::move(sc.cluster);
    cfg.queues = std::move(sc.queues);
    return cfg;
  }

  // Pass 1: the cluster, from a kind: Cluster document or a top-level
  // `cluster:` of a form 2/3 object. At most one.
  QueueConfig cfg;
  int cluster_line = 0;
  for (const Doc& d : docs) {
    const Field* f = nullptr;
    if (d.kind == DocKind::kCluster) {
      HDRF_RETURN_IF_ERROR(d.map.CheckKeys(d.rep, "", "a Cluster",
                                           {"apiVersion", "kind", "metadata", "capacity"}));
      f = d.map.Get("capacity");
      if (f == nullptr) return rep.Error(d.map.line(), "", "kind: Cluster needs a capacity map");
    } else if (d.kind == DocKind::kNestedRoot || d.kind == DocKind::kHierarchicalQueue) {
      f = d.map.Get("cluster");
    }
    if (f == nullptr) continue;
    if (cluster_line != 0) {
      return rep.Error(f->line, "", "a second cluster definition (the first is at line " +
                                        std::to_string(cluster_line) + ")");
    }
    HDRF_ASSIGN_OR_RETURN(cfg.cluster, GetCluster(d.rep, *f));
    cluster_line = f->line;
  }
  ResourceScope scope;
  if (cluster_line != 0) scope.cluster = &cfg.cluster;

  // Pass 2: the queues.
  QueueTable table(rep);
  for (const Doc& d : docs) {
    switch (d.kind) {
      case DocKind::kVolcanoQueue:
        HDRF_RETURN_IF_ERROR(ParseVolcanoQueue(d.rep, d.map, scope, &table));
        break;
      case DocKind::kNestedRoot:
        HDRF_RETURN_IF_ERROR(ParseNestedRoot(d.rep, d.map, scope, &table));
        break;
      case DocKind::kHierarchicalQueue:
        HDRF_RETURN_IF_ERROR(ParseHierarchicalQueue(d.rep, d.map, scope, &table));
        break;
      case DocKind::kCluster:
      case DocKind::kScenario:
      case DocKind::kList:
        break;
    }
  }
  cfg.queues = table.Take();
  return cfg;
}

StatusOr<Scenario> ParseScenarioImpl(const Reporter& rep, std::string_view text) {
  HDRF_ASSIGN_OR_RETURN(std::vector<LoadedDoc> loaded, LoadDocs(rep, text));
  if (loaded.size() > 1) {
    return rep.Error(loaded[1].rep.LineOf(loaded[1].node, 1), "",
                     "a scenario file holds exactly one YAML document");
  }
  const Reporter& drep = loaded[0].rep;
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(drep, loaded[0].node, 1, "", "a scenario"));
  if (const Field* k = m.Get("kind")) {
    return drep.Error(k->line, "",
                      "not a scenario (it has kind: " + Describe(k->value) +
                          "); a scenario has the keys cluster, queues, jobs, steps, "
                          "overcommitFactor");
  }
  return ParseScenarioDoc(drep, m);
}

// Runs `fn` and turns any exception into a status: yaml-cpp reports
// malformed input by throwing.
template <typename T, typename Fn>
StatusOr<T> Guard(const Reporter& rep, Fn fn) {
  try {
    return fn();
  } catch (const YAML::Exception& e) {
    // LoadDocs catches parse errors itself, with the right line; this is a
    // last resort (the line may then be relative to a later document).
    return rep.Error(e.mark.is_null() ? 1 : e.mark.line + 1, "", "YAML error: " + e.msg);
  } catch (const std::exception& e) {
    return Status::Internal(rep.source() + ":1: unexpected error: " + e.what());
  }
}

}  // namespace

StatusOr<QueueConfig> ParseQueueConfig(std::string_view yaml_text,
                                       const std::string& source_name) {
  const Reporter rep(source_name);
  return Guard<QueueConfig>(rep, [&] { return ParseQueueConfigImpl(rep, yaml_text); });
}

StatusOr<QueueConfig> LoadQueueConfigFile(const std::string& path) {
  HDRF_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
  return ParseQueueConfig(text, path);
}

StatusOr<Scenario> ParseScenario(std::string_view yaml_text, const std::string& source_name) {
  const Reporter rep(source_name);
  return Guard<Scenario>(rep, [&] { return ParseScenarioImpl(rep, yaml_text); });
}

StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  HDRF_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
  return ParseScenario(text, path);
}

#undef HDRF_QUEUE_FIELDS

}  // namespace hdrf
