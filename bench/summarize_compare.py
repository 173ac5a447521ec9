#!/usr/bin/env python3
"""Turns the JSON files of bench/compare_zoo.sh into a Markdown table.

For each model and strategy: the median over rounds of each round's median
latency, with the spread (min-max of the round medians). Ratios are taken
between medians of the same run. Usage: summarize_compare.py DIR THREADS ROUNDS REPEAT
"""
import glob
import json
import math
import os
import platform
import statistics
import sys

work, threads, rounds, repeat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def plan_label(plan):
    """A plan file's strategy as `compare` names it ("single:onednn [onednn:blocked-16]",
    "collage@blocked-16 [onednn:blocked-16]" for a plan searched in one of several layouts)."""
    name = plan["strategy"]
    searched_in = (plan.get("search") or {}).get("layout")
    if name == "collage" and searched_in:
        name += "@" + searched_in
    layouts = plan.get("compute_layouts") or {}
    if not layouts:
        return name
    return name + " [" + ",".join(f"{b}:{l}" for b, l in sorted(layouts.items())) + "]"


def collage_where(label):
    """Where a collage entry was searched and computes, as the table says it:
    "collage@blocked-16 [onednn:blocked-16]" -> ", searched in blocked-16, in [onednn:blocked-16]"."""
    rest = label[len("collage"):]
    text = ""
    if rest.startswith("@"):
        layout, _, rest = rest[1:].partition(" ")
        text += ", searched in " + ("each backend's own layout" if layout == "own" else layout)
    rest = rest.strip()
    if rest:
        text += ", in " + rest
    return text


models = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(work, "*.collage.*.json"))})
rows = []
geo = {"best single": [], "greedy": [], "onnxruntime": []}
searched_geo = {"best single": [], "greedy": [], "onnxruntime": []}
errors = []
search_errors = []
for model in models:
    per_strategy = {}
    # Per strategy, its estimates over the rounds: the re-timed sum of its
    # partitions, and the search's (collage entries only; an older file has
    # the search's for the searched plan alone, at the top).
    estimates = {}
    search_estimates = {}
    # Per collage entry, the strategies whose plan it was (compare runs such
    # a plan once).
    same_as = {}
    for path in sorted(glob.glob(os.path.join(work, f"{model}.collage.*.json"))):
        document = json.load(open(path))
        per_entry = any("search_estimated_ms" in s for s in document["strategies"])
        if not per_entry and document.get("search_estimated_ms") is not None:
            search_estimates.setdefault("collage", []).append(document["search_estimated_ms"])
        for s in document["strategies"]:
            per_strategy.setdefault(s["name"], []).append(s["latency_ms_median"])
            if not s["name"].startswith("collage"):
                continue
            if s.get("estimated_ms") is not None and (per_entry or s["name"] == "collage"):
                estimates.setdefault(s["name"], []).append(s["estimated_ms"])
            if s.get("search_estimated_ms") is not None:
                search_estimates.setdefault(s["name"], []).append(s["search_estimated_ms"])
            if s.get("same_as"):
                same_as.setdefault(s["name"], set()).add(s["same_as"])
    # The plan `collage tune` saved (compare_zoo.sh's first step): the
    # searched plan, or the baseline it timed faster in its own runs.
    kept_label = None
    plan_path = os.path.join(work, f"{model}.plan.json")
    if os.path.exists(plan_path):
        kept_label = plan_label(json.load(open(plan_path)))
    ort = [json.load(open(p))["median_ms"] for p in sorted(glob.glob(os.path.join(work, f"{model}.ort.*.json")))]
    med = {k: statistics.median(v) for k, v in per_strategy.items()}
    spread = {k: (min(v), max(v)) for k, v in per_strategy.items()}
    # A strategy may be there in several compute layouts ("single:onednn
    # [onednn:blocked-16]"): each counts as that strategy, the faster as
    # the tuner keeps it.
    singles = {k: v for k, v in med.items() if k.startswith("single:") or k == "native"}
    best_name = min(singles, key=singles.get)
    greedies = [k for k in med if k.startswith("greedy:")]
    greedy = min(greedies, key=med.get) if greedies else None
    # The searched plans: "collage", or with --search-layout each one per
    # layout searched in ("collage@own", "collage@blocked-16"), each also in
    # its backends' other compute layouts.
    collage_name = min((k for k in med if k == "collage" or k.startswith("collage ")
                        or k.startswith("collage@")), key=med.get)
    collage = med[collage_name]
    # The kept plan as this run timed it: the collage entry in the layout
    # tune kept it in, or the baseline's row; without a plan file, the
    # searched plan.
    if kept_label is None or kept_label not in med:
        kept_label = collage_name
    kept = med[kept_label]
    kept_same = ", ".join(sorted(same_as.get(kept_label, ())))
    kept_mixed = kept_label.startswith("collage") and not kept_same
    # The estimate of the collage entry that ran fastest, made in its layout;
    # an older file estimated the searched plan in its own layout only.
    estimate_name = collage_name if collage_name in estimates else "collage"
    row = {
        "model": model, "native": med["native"], "best": (best_name, med[best_name]),
        "greedy": med.get(greedy) if greedy else None, "collage": collage,
        "collage_name": collage_name,
        "collage_spread": spread[collage_name], "ort": statistics.median(ort) if ort else None,
        "estimate": statistics.median(estimates[estimate_name]) if estimate_name in estimates else None,
        "search_estimate": (statistics.median(search_estimates[estimate_name])
                            if estimate_name in search_estimates else None),
        "same_as": ", ".join(sorted(same_as.get(collage_name, ()))),
        "kept": kept, "kept_label": kept_label, "kept_same": kept_same, "kept_mixed": kept_mixed,
        "kept_spread": spread[kept_label],
    }
    rows.append(row)
    geo["best single"].append(med[best_name] / kept)
    searched_geo["best single"].append(med[best_name] / collage)
    if greedy:
        geo["greedy"].append(med[greedy] / kept)
        searched_geo["greedy"].append(med[greedy] / collage)
    if ort:
        geo["onnxruntime"].append(row["ort"] / kept)
        searched_geo["onnxruntime"].append(row["ort"] / collage)
    if row["estimate"]:
        errors.append(abs(collage - row["estimate"]) / collage)
    if row["search_estimate"]:
        search_errors.append(abs(collage - row["search_estimate"]) / collage)


def gmean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


print(f"# Collage vs. baselines, {threads} threads\n")
print(f"Machine: {cpu_model()}, {os.cpu_count()} cores. Threads: {threads}. "
      f"{rounds} rounds x {repeat} interleaved runs per strategy (each timed run follows 20 ms of "
      f"untimed runs of the same plan, so plans run back to back); latency = median over rounds of "
      f"each round's median (ms); a strategy timed in several compute layouts counts at its "
      f"fastest (as `tune` keeps it; the layout is named in brackets); "
      f"the kept plan is the one `collage tune` saved before the timed rounds (the searched plan, "
      f"or the baseline its own runs found faster), as these rounds timed it, with the min-max "
      f"of round medians; the searched plan is the search's, before any fallback (where it is a "
      f"baseline's plan, `compare` ran that plan once and both rows share its timing); its "
      f"estimate sums its partitions as the search "
      f"measures them, in the compute layout it ran in, timed again in between each round's runs (twice each, half the runs apart), and the additive error is "
      f"(measured - estimate) / measured; the search's estimate is the same sum from the "
      f"measurements the search used (the measurement cache's, made when the model was tuned).\n")
print("| model | native | best single backend | greedy | collage (kept plan) | searched plan | searched estimate | additive error | search's estimate (error) | ONNX Runtime | kept vs best single | searched vs best single | kept vs greedy | ORT / kept |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    g = f"{r['greedy']:.2f}" if r["greedy"] else "-"
    o = f"{r['ort']:.2f}" if r["ort"] else "-"
    vs_g = f"{r['greedy'] / r['kept']:.2f}x" if r["greedy"] else "-"
    vs_o = f"{r['ort'] / r['kept']:.2f}" if r["ort"] else "-"
    lo, hi = r["collage_spread"]
    same = f", {r['same_as']}'s plan" if r["same_as"] else ""
    if r["collage_name"] != "collage" and not r["same_as"]:
        same += collage_where(r["collage_name"])
    if r["kept_mixed"]:
        what = "mixed" + collage_where(r["kept_label"])
    elif r["kept_same"]:
        what = r["kept_same"]
    else:
        what = r["kept_label"]
    klo, khi = r["kept_spread"]
    est = f"{r['estimate']:.2f}" if r["estimate"] else "-"
    err = f"{(r['collage'] - r['estimate']) / r['collage'] * 100:+.0f}%" if r["estimate"] else "-"
    searched = r["search_estimate"]
    search = (f"{searched:.2f} ({(r['collage'] - searched) / r['collage'] * 100:+.0f}%)"
              if searched else "-")
    print(f"| {r['model']} | {r['native']:.2f} | {r['best'][1]:.2f} ({r['best'][0]}) | {g} | "
          f"{r['kept']:.2f} ({klo:.2f}-{khi:.2f}), {what} | "
          f"{r['collage']:.2f} ({lo:.2f}-{hi:.2f}){same} | {est} | {err} | {search} | {o} | "
          f"{r['best'][1] / r['kept']:.2f}x | {r['best'][1] / r['collage']:.2f}x | {vs_g} | {vs_o} |")
print()
for k, v in geo.items():
    print(f"- geometric-mean speedup of collage's kept plan over {k}: {gmean(v):.2f}x ({len(v)} models); "
          f"of the searched plan: {gmean(searched_geo[k]):.2f}x")
if geo["onnxruntime"]:
    above = [f"{r['model']} {r['kept'] / r['ort']:.2f}" for r in rows if r["ort"] and r["kept"] / r["ort"] > 1.10]
    print(f"- collage latency / ONNX Runtime latency, geometric mean: {1 / gmean(geo['onnxruntime']):.2f} "
          f"(the searched plan: {1 / gmean(searched_geo['onnxruntime']):.2f}); kept plans above 1.10: "
          f"{', '.join(above) if above else 'none'}")
print(f"- the kept plan is mixed (not a single backend's plan) on {sum(r['kept_mixed'] for r in rows)} "
      f"of {len(rows)} models")
if errors:
    print(f"- additive error |measured - estimate| / measured (the searched plan): median {statistics.median(errors) * 100:.0f}%, "
          f"max {max(errors) * 100:.0f}%; within 10% on {sum(e <= 0.10 for e in errors)} of {len(errors)} models")
if search_errors:
    print(f"- the search's estimate: median {statistics.median(search_errors) * 100:.0f}%, "
          f"max {max(search_errors) * 100:.0f}%; within 10% on {sum(e <= 0.10 for e in search_errors)} "
          f"of {len(search_errors)} models")
