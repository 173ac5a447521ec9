#include "collage/plan/plan_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_report.h"

namespace collage {
namespace {

using Json = nlohmann::json;

// Compare's JSON is a few kilobytes; this bounds what a wrong file costs.
constexpr std::int64_t kMaxCompareJsonBytes = 16 << 20;

Json optional_ms(const std::optional<double>& ms) { return ms ? Json(*ms) : Json(nullptr); }

// `json` as the text of a <script type="application/json">: "<" only
// occurs inside strings there, and "\u003c" keeps "</script>" out.
std::string script_json(const Json& json) {
  std::string text = json.dump();
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// The SVG element of Graphviz's output, without the XML prolog and doctype
// that may not stand inside HTML.
std::string inline_svg(const std::string& svg) {
  auto start = svg.find("<svg");
  return start == std::string::npos ? std::string() : svg.substr(start);
}

// Where each boundary value of a partition comes from and goes to.
struct Boundaries {
  // Value -> the partition that writes it.
  std::map<std::string, std::size_t> producer;
  // Value -> the partitions that read it.
  std::map<std::string, std::vector<std::size_t>> consumers;
};

Boundaries boundaries_of(const Plan& plan) {
  Boundaries b;
  for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
    for (const std::string& v : plan.partitions[i].outputs) b.producer[v] = i;
    for (const std::string& v : plan.partitions[i].inputs) b.consumers[v].push_back(i);
  }
  return b;
}

// The page's data for each partition; `pinned` is pinned_partitions(plan).
Json partitions_json(const HtmlReport& report, const std::vector<bool>& pinned) {
  const Plan& plan = report.plan;
  const Boundaries boundaries = boundaries_of(plan);
  std::map<int, const PartitionProfile*> profiled;
  if (report.profile) {
    for (const PartitionProfile& p : report.profile->partitions) profiled[p.index] = &p;
  }
  Json partitions = Json::array();
  for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
    const PlanPartition& p = plan.partitions[i];
    Json nodes = Json::array();
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
      nodes.push_back({{"name", p.nodes[n]}, {"op", n < p.ops.size() ? p.ops[n] : ""}});
    }
    Json alternatives = Json::array();
    for (const PlanAlternative& a : p.alternatives) {
      alternatives.push_back({{"backend", a.backend},
                              {"rule", a.rule},
                              {"nodes", a.node_count},
                              {"estimated_ms", optional_ms(a.estimated_ms)},
                              {"reason", a.reason}});
    }
    // Each input: the partition that writes it (null: the model's input or
    // a weight), and whether it crosses from another backend.
    Json inputs = Json::array();
    for (const std::string& v : p.inputs) {
      auto from = boundaries.producer.find(v);
      if (from == boundaries.producer.end()) {
        inputs.push_back({{"value", v}, {"from", nullptr}, {"backend", "model input"}});
      } else {
        const std::string& backend = plan.partitions[from->second].backend;
        inputs.push_back({{"value", v},
                          {"from", from->second},
                          {"backend", backend},
                          {"crosses", backend != p.backend}});
      }
    }
    Json outputs = Json::array();
    for (const std::string& v : p.outputs) {
      Json to = Json::array();
      bool crosses = false;
      if (auto it = boundaries.consumers.find(v); it != boundaries.consumers.end()) {
        for (std::size_t c : it->second) {
          to.push_back(c);
          crosses = crosses || plan.partitions[c].backend != p.backend;
        }
      }
      outputs.push_back({{"value", v}, {"to", to}, {"crosses", crosses}});
    }
    Json entry = {{"index", i},
                  {"backend", p.backend},
                  {"rule", p.rule},
                  {"nodes", nodes},
                  {"estimated_ms", optional_ms(p.estimated_ms)},
                  {"in_context_ms", optional_ms(p.measured_ms)},
                  {"alternatives", alternatives},
                  {"inputs", inputs},
                  {"outputs", outputs},
                  {"pinned", static_cast<bool>(pinned[i])}};
    if (auto it = profiled.find(static_cast<int>(i)); it != profiled.end()) {
      entry["layout_ms"] = it->second->layout_ms;
      entry["copy_ms"] = it->second->copy_ms;
    }
    partitions.push_back(std::move(entry));
  }
  return partitions;
}

// Horizontal bars, one per strategy: the median, a whisker from p10 to
// p90, the fastest matching one marked.
std::string strategies_svg(const std::vector<PlanStrategyTiming>& rows) {
  if (rows.empty()) return "";
  double longest = 0;
  std::size_t fastest = rows.size();
  std::size_t label_chars = 8;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    longest = std::max({longest, rows[i].median_ms, rows[i].p90_ms});
    label_chars = std::max(label_chars, rows[i].strategy.size());
    if (rows[i].outputs_match &&
        (fastest == rows.size() || rows[i].median_ms < rows[fastest].median_ms)) {
      fastest = i;
    }
  }
  if (longest <= 0) longest = 1;
  const double label_width = 7.0 * static_cast<double>(std::min<std::size_t>(label_chars, 48)) + 10;
  const double chart_width = 480;
  const double row_height = 22;
  const double height = row_height * static_cast<double>(rows.size()) + 30;
  std::string svg = fmt::format(
      "<svg id=\"strategies-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      label_width + chart_width + 90, height);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PlanStrategyTiming& r = rows[i];
    const double y = row_height * static_cast<double>(i) + 4;
    const double width = chart_width * r.median_ms / longest;
    const bool collage = r.strategy.rfind("collage", 0) == 0;
    const char* fill = !r.outputs_match ? "#d9534f" : collage ? "#2b7bb9" : "#9aa5b1";
    svg += fmt::format(
        "<g class=\"strategy-bar\"><title>{0}: median {1:.3f} ms (p10 {2:.3f}, p90 {3:.3f}){4}"
        "</title>\n<text x=\"{5:.0f}\" y=\"{6:.0f}\" text-anchor=\"end\">{0}</text>\n"
        "<rect x=\"{7:.0f}\" y=\"{8:.0f}\" width=\"{9:.1f}\" height=\"{10:.0f}\" fill=\"{11}\"/>\n",
        html_escape(shorten(r.strategy, 48)), r.median_ms, r.p10_ms, r.p90_ms,
        r.outputs_match ? "" : ", outputs differ from native", label_width - 6, y + 13, label_width,
        y + 2, std::max(width, 1.0), row_height - 6, fill);
    if (r.p90_ms > r.p10_ms) {
      svg += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\" stroke=\"#333\"/>\n",
          label_width + chart_width * r.p10_ms / longest,
          label_width + chart_width * r.p90_ms / longest, y + 9, y + 9);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\">{:.3f} ms{}</text></g>\n",
                       label_width + std::max(width, chart_width * r.p90_ms / longest) + 6, y + 13,
                       r.median_ms,
                       i == fastest       ? " (fastest)"
                       : !r.outputs_match ? " (wrong)"
                                          : "");
  }
  svg += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"#555\">median end to end; the line spans p10 to "
      "p90</text>\n</svg>\n",
      label_width, height - 6);
  return svg;
}

// The spans of the run whose partitions took the median time.
std::vector<const TraceSpan*> median_run(const std::vector<TraceSpan>& spans) {
  std::map<int, double> kernel_us;
  for (const TraceSpan& s : spans) {
    if (s.kind == SpanKind::kPartition) kernel_us[s.run] += s.duration_us;
  }
  if (kernel_us.empty()) return {};
  std::vector<std::pair<double, int>> runs;
  for (const auto& [run, us] : kernel_us) runs.emplace_back(us, run);
  std::sort(runs.begin(), runs.end());
  const int chosen = runs[runs.size() / 2].second;
  std::vector<const TraceSpan*> out;
  for (const TraceSpan& s : spans) {
    if (s.run == chosen && s.kind != SpanKind::kRun && s.kind != SpanKind::kOp) out.push_back(&s);
  }
  return out;
}

// One run of the plan: partitions' kernels on the first lane, coloured by
// backend; layout conversions, copies, allocations and the executor's work
// on the second.
std::string timeline_svg(const Plan& plan, const std::vector<TraceSpan>& spans) {
  std::vector<const TraceSpan*> run = median_run(spans);
  if (run.empty()) return "";
  double start = run.front()->start_us, end = start;
  for (const TraceSpan* s : run) {
    start = std::min(start, s->start_us);
    end = std::max(end, s->start_us + s->duration_us);
  }
  const double width = 1100, left = 90;
  const double scale = (width - left - 10) / std::max(end - start, 1.0);
  std::string svg = fmt::format(
      "<svg id=\"timeline-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
      "height=\"96\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"4\" y=\"26\">kernels</text><text x=\"4\" y=\"58\">boundaries</text>\n",
      width);
  for (const TraceSpan* s : run) {
    const bool kernel = s->kind == SpanKind::kPartition;
    std::string fill = "#888888";
    std::string label = span_kind_name(s->kind);
    std::string partition_attr;
    if (kernel && s->partition >= 0 &&
        static_cast<std::size_t>(s->partition) < plan.partitions.size()) {
      const PlanPartition& p = plan.partitions[static_cast<std::size_t>(s->partition)];
      fill = backend_color(p.backend);
      label = fmt::format("#{} {}", s->partition, p.backend);
      partition_attr = fmt::format(" data-partition=\"{}\"", s->partition);
    }
    svg += fmt::format(
        "<rect class=\"span\"{} x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"22\" fill=\"{}\" "
        "stroke=\"#444\" stroke-width=\"0.3\"><title>{}: {:.3f} ms at {:.3f} ms{}</title></rect>\n",
        partition_attr, left + (s->start_us - start) * scale, kernel ? 10 : 42,
        std::max(s->duration_us * scale, 0.5), fill, html_escape(label), s->duration_us * 1e-3,
        (s->start_us - start) * 1e-3, s->name.empty() ? "" : " (" + html_escape(s->name) + ")");
  }
  svg += fmt::format(
      "<line x1=\"{0:.0f}\" x2=\"{1:.0f}\" y1=\"74\" y2=\"74\" stroke=\"#333\"/>"
      "<text x=\"{0:.0f}\" y=\"90\">0 ms</text>"
      "<text x=\"{1:.0f}\" y=\"90\" text-anchor=\"end\">{2:.3f} ms</text>\n</svg>\n",
      left, left + (end - start) * scale, (end - start) * 1e-3);
  return svg;
}

constexpr const char* kStyle = R"css(
body { font-family: sans-serif; margin: 0; color: #222; }
header { padding: 10px 16px; background: #f4f6f8; border-bottom: 1px solid #ccd; }
header h1 { font-size: 18px; margin: 0 0 4px 0; }
header p { margin: 2px 0; font-size: 13px; }
main { display: flex; gap: 12px; padding: 12px 16px; }
#graph { flex: 3; overflow: auto; max-height: 80vh; border: 1px solid #ccd; }
#graph svg { max-width: none; }
#details { flex: 2; font-size: 13px; overflow: auto; max-height: 80vh; }
#details table, #partition-table { border-collapse: collapse; font-size: 12px; }
td, th { border-bottom: 1px solid #e0e0e8; padding: 2px 6px; text-align: left; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #555;
          vertical-align: middle; margin-right: 4px; }
.selected polygon, .selected path { stroke: #e4572e !important; stroke-width: 3px !important; }
tr.selected { background: #fde8e0; }
g[id^="partition_"], #partition-table tr[data-partition] { cursor: pointer; }
section { padding: 4px 16px 12px 16px; }
h2 { font-size: 15px; margin: 10px 0 6px 0; }
.crosses { color: #b04a00; }
.muted { color: #777; }
)css";

constexpr const char* kScript = R"js(
(function () {
  const data = JSON.parse(document.getElementById('plan-data').textContent);
  const details = document.getElementById('details');
  const ms = (v) => (v === null || v === undefined) ? '-' : v.toFixed(3) + ' ms';
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function table(headers, rows) {
    const t = el('table');
    const head = el('tr');
    headers.forEach((h) => head.appendChild(el('th', h)));
    t.appendChild(head);
    rows.forEach((r) => {
      const tr = el('tr');
      r.forEach((c) => tr.appendChild(el('td', String(c))));
      t.appendChild(tr);
    });
    return t;
  }
  function select(index) {
    const p = data.partitions[index];
    if (!p) return;
    document.querySelectorAll('.selected').forEach((e) => e.classList.remove('selected'));
    const g = document.getElementById('partition_' + index);
    if (g) g.classList.add('selected');
    const row = document.querySelector('#partition-table tr[data-partition="' + index + '"]');
    if (row) row.classList.add('selected');
    details.replaceChildren();
    const title = el('h2', '#' + index + ' ' + p.backend + (p.pinned ? ' (pinned)' : ''));
    const swatch = el('span', '', 'swatch');
    swatch.style.background = data.colors[p.backend] || '#fff';
    title.prepend(swatch);
    details.appendChild(title);
    details.appendChild(el('p', 'rule: ' + p.rule));
    details.appendChild(el('p', 'estimated alone: ' + ms(p.estimated_ms) +
                                '   in context: ' + ms(p.in_context_ms)));
    if (p.layout_ms !== undefined) {
      details.appendChild(el('p', 'inside the kernel: layout conversions ' + ms(p.layout_ms) +
                                  ', copies ' + ms(p.copy_ms) + ' per run'));
    }
    details.appendChild(el('h2', 'nodes (' + p.nodes.length + ')'));
    details.appendChild(table(['node', 'op'], p.nodes.map((n) => [n.name, n.op])));
    details.appendChild(el('h2', 'runner-up candidates'));
    if (p.alternatives.length === 0) {
      details.appendChild(el('p', 'none: no other candidate started at its first node', 'muted'));
    } else {
      details.appendChild(table(['backend', 'nodes', 'estimated', 'rule'],
        p.alternatives.map((a) => [a.backend, a.nodes,
                                   a.estimated_ms === null ? 'invalid: ' + a.reason : ms(a.estimated_ms),
                                   a.rule])));
    }
    details.appendChild(el('h2', 'boundaries'));
    const inputs = p.inputs.map((i) => ['in', i.value,
      i.from === null ? 'model input' : '#' + i.from + ' ' + i.backend +
      (i.crosses ? ' (crosses backends)' : '')]);
    const outputs = p.outputs.map((o) => ['out', o.value,
      o.to.length === 0 ? 'model output' :
      o.to.map((t) => '#' + t + ' ' + data.partitions[t].backend).join(', ') +
      (o.crosses ? ' (crosses backends)' : '')]);
    details.appendChild(table(['', 'value', 'from / to'], inputs.concat(outputs)));
  }
  let drawn = 0;
  data.partitions.forEach((p) => {
    const g = document.getElementById('partition_' + p.index);
    if (g) {
      drawn += 1;
      g.addEventListener('click', () => select(p.index));
    }
  });
  document.querySelectorAll('[data-partition]').forEach((e) => {
    e.addEventListener('click', () => select(Number(e.dataset.partition)));
  });
  document.body.dataset.partitions = String(data.partitions.length);
  document.body.dataset.partitionsDrawn = String(drawn);
  if (data.partitions.length > 0) select(0);
  document.body.dataset.ready = '1';
})();
)js";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<PlanStrategyTiming> read_compare_json(const std::string& path) {
  const std::string text = read_regular_file(path, kMaxCompareJsonBytes);
  Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object() || !document.contains("strategies") ||
      !document.at("strategies").is_array()) {
    throw Error("not the JSON of `collage compare --json` (no \"strategies\" list)",
                {.file = path});
  }
  std::vector<PlanStrategyTiming> rows;
  for (const Json& row : document.at("strategies")) {
    if (!row.is_object() || !row.contains("name") || !row.at("name").is_string() ||
        !row.contains("latency_ms_median") || !row.at("latency_ms_median").is_number()) {
      throw Error("a strategy without \"name\" and \"latency_ms_median\"", {.file = path});
    }
    auto number = [&](const char* key) {
      return row.contains(key) && row.at(key).is_number() ? row.at(key).get<double>() : 0.0;
    };
    rows.push_back(PlanStrategyTiming{
        row.at("name").get<std::string>(), number("latency_ms_median"), number("latency_ms_p10"),
        number("latency_ms_p90"),
        !row.contains("outputs_match") || !row.at("outputs_match").is_boolean() ||
            row.at("outputs_match").get<bool>()});
  }
  return rows;
}

std::string plan_to_html(const HtmlReport& report) {
  const Plan& plan = report.plan;
  Json colors = Json::object();
  for (const PlanPartition& p : plan.partitions) colors[p.backend] = backend_color(p.backend);
  const std::vector<bool> pinned = pinned_partitions(plan);
  Json data = {{"partitions", partitions_json(report, pinned)}, {"colors", colors}};

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>collage plan: {}</title>\n", html_escape(plan.model_path));
  html += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<header>\n";
  html += fmt::format("<h1>{} plan of {}</h1>\n", html_escape(plan.label()),
                      html_escape(plan.model_path));
  html += fmt::format("<p>estimated {} ms · measured end to end {} ms · {} thread{} · {}</p>\n",
                      ms_column(plan.estimated_ms), ms_column(plan.measured_ms), plan.threads,
                      plan.threads == 1 ? "" : "s",
                      html_escape(shorten(plan.machine.substr(0, plan.machine.find('|')), 80)));
  if (plan.search.candidates > 0) {
    html += fmt::format(
        "<p>search: {} candidates, {} measured, {} from the cache, {} invalid, {:.1f} s; "
        "local moves {} tried, {} kept</p>\n",
        plan.search.candidates, plan.search.measured, plan.search.cache_hits, plan.search.invalid,
        plan.search.seconds, plan.search.moves_tried, plan.search.moves_kept);
  }
  if (!plan.placement.empty()) {
    html += "<p>placement honoured:";
    for (const std::string& line : plan.placement) {
      html += " <code>" + html_escape(shorten(line, 120)) + "</code>";
    }
    html += "</p>\n";
  }
  html += "<p>";
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    html += fmt::format(
        "<span class=\"legend\"><span class=\"swatch\" style=\"background:{}\"></span>{} "
        "({})</span> ",
        backend_color(backend), html_escape(backend), count);
  }
  html += "</p>\n</header>\n<main>\n<div id=\"graph\">\n";
  html += report.graph_svg.empty()
              ? std::string("<p class=\"muted\">no drawing (Graphviz was not run)</p>\n")
              : inline_svg(report.graph_svg);
  html += "</div>\n<div id=\"details\"><p class=\"muted\">select a partition</p></div>\n</main>\n";

  html +=
      "<section>\n<h2>partitions</h2>\n<table id=\"partition-table\">\n<tr><th>#</th>"
      "<th>backend</th><th>ops</th><th>estimated ms</th><th>in context ms</th></tr>\n";
  for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
    const PlanPartition& p = plan.partitions[i];
    std::string ops;
    for (std::size_t n = 0; n < p.ops.size() && n < 6; ++n) ops += (n ? "+" : "") + p.ops[n];
    if (p.ops.size() > 6) ops += fmt::format(" (+{} more)", p.ops.size() - 6);
    html += fmt::format(
        "<tr data-partition=\"{0}\"><td>{0}</td><td><span class=\"swatch\" "
        "style=\"background:{1}\"></span>{2}{3}</td><td>{4}</td><td>{5}</td><td>{6}</td></tr>\n",
        i, backend_color(p.backend), html_escape(p.backend), pinned[i] ? " *" : "",
        html_escape(ops), ms_column(p.estimated_ms), ms_column(p.measured_ms));
  }
  html += "</table>\n</section>\n";

  html += "<section>\n<h2>strategies measured end to end</h2>\n";
  const std::string chart = strategies_svg(report.strategies);
  html += chart.empty() ? "<p class=\"muted\">none: the plan was not verified; `collage compare "
                          "--json FILE` and `show --compare FILE` add them</p>\n"
                        : chart;
  html += "</section>\n<section>\n<h2>timeline of one run</h2>\n";
  const std::string timeline = timeline_svg(plan, report.spans);
  html += timeline.empty() ? "<p class=\"muted\">none: `collage run MODEL --plan PLAN --profile "
                             "trace.json` and `show --profile trace.json` add it</p>\n"
                           : timeline;
  html += "</section>\n";
  html += "<script type=\"application/json\" id=\"plan-data\">" + script_json(data) +
          "</script>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace collage
