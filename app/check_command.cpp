// quantplan --headless --check FILE: reads a startup log (core/check/startup_log.h), checks it
// against the prediction (core/check/check.h) and prints the rows as a table or as the JSON
// `check` section. docs/check.md.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/check/check.h"
#include "core/check/log_corpus.h"

namespace quantplan::app {
namespace {

// Whether the file at `path` is JSON (a benchmark result): its first non-blank byte is '{'.
bool file_is_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("--check", "cannot read " + path);
    char c = 0;
    for (int i = 0; i < 4096 && in.get(c); ++i)
        if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
    return false;
}

// A startup log is read as a stream (any size, bounded memory); a benchmark result whole, up to 64 MiB.
check::StartupLog read_log_stream(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("--check", "cannot read " + path);
    return check::read_startup_log(in, path);
}

std::vector<check::DeviceNameEntry> device_names() {
    const std::filesystem::path p = gpus_dir().parent_path() / "gpu-device-names.json";
    return check::parse_device_names(read_text_file(p, p.string(), std::uint64_t{1} << 20), p.string());
}

// What every check prices with: the bundled models, GPUs and GPU names, and `catalog` (which must
// outlive the result).
check::CheckInputs bundled_inputs(const engine::EngineCatalog& catalog) {
    check::CheckInputs in;
    in.models_dir = models_dir();
    in.gpus_dir = gpus_dir();
    in.gpus = load_gpu_profiles(gpus_dir());
    in.catalog = &catalog;
    in.spec_catalog = &spec_catalog();
    in.device_names = device_names();
    return in;
}

std::string shown(double v, const std::string& unit) {
    char buf[48];
    if (unit == "bytes") std::snprintf(buf, sizeof buf, "%.2f GiB", v / 1073741824.0);
    else if (unit == "s") std::snprintf(buf, sizeof buf, "%.2f ms", v * 1e3);
    else if (unit == "tokens/s" || unit == "requests/s" || unit == "tokens/step") std::snprintf(buf, sizeof buf, "%.2f", v);
    else if (unit == "x") std::snprintf(buf, sizeof buf, "%.2fx", v);
    else std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

nlohmann::json check_json(const check::CheckResult& r, const std::string& file) {
    const check::Identified& i = r.identified;
    nlohmann::json rows = nlohmann::json::array();
    for (const check::CheckRow& row : r.rows)
        rows.push_back({{"quantity", row.quantity},
                        {"logged", row.logged},
                        {"as_logged", row.as_logged},
                        {"predicted", row.predicted ? nlohmann::json(*row.predicted) : nlohmann::json(nullptr)},
                        {"unit", row.unit},
                        {"error_fraction", row.error_fraction ? nlohmann::json(*row.error_fraction) : nlohmann::json(nullptr)},
                        {"note", row.note}});
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& [key, v] : i.settings) settings[key] = {{"value", v.value}, {"from", v.from}};
    return {{"file", file},
            {"identified",
             {{"model", i.model}, {"gpu", i.gpu}, {"engine", i.engine}, {"version", i.version}, {"profile", i.profile}, {"tp", i.tp},
              {"gpu_memory_utilization", i.gpu_memory_utilization}, {"max_model_len", i.max_model_len}, {"kv_cache_dtype", i.kv_cache_dtype},
              {"quantization", i.quantization}, {"scheme", i.scheme}, {"from", i.from}, {"settings", settings},
              {"device_name", i.device_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(i.device_name)}, {"gpu_candidates", i.gpu_candidates}}},
            {"rows", rows},
            {"largest_difference", r.largest_difference},
            {"unresolved", r.unresolved},
            {"notes", r.notes}};
}

// The corpus metric and stat of a check row ("ttft_s_p99" -> ttft_s, p99); "" for rows the corpus has no metric for.
std::pair<std::string, std::string> corpus_metric(const std::string& quantity) {
    if (quantity == "requests_per_s") return {"", ""};
    for (const std::string stat : {"mean", "p50", "p99"}) {
        const std::string tail = "_" + stat;
        if (quantity.size() > tail.size() && quantity.compare(quantity.size() - tail.size(), tail.size(), tail) == 0)
            return {quantity.substr(0, quantity.size() - tail.size()), stat};
    }
    return {quantity, ""};
}

// Appends the rows of `r` as corpus records (assets/measurements/README.md) to `path`, written
// atomically; the file is created when absent. Returns the number of records added.
std::size_t add_to_corpus(const check::CheckResult& r, const std::string& check_file, const std::string& path) {
    nlohmann::ordered_json doc;
    {
        std::error_code ec;
        if (std::filesystem::exists(path, ec)) {
            try {
                doc = nlohmann::ordered_json::parse(read_text_file(path, "--add-to-corpus"));
            } catch (const nlohmann::json::exception&) {
                throw Error("--add-to-corpus", path + " exists and is not a corpus file");
            }
            const bool corpus_file = doc.is_object() && doc.contains("format") && doc["format"] == "quantplan-measurements/1" &&
                                     doc.contains("records") && doc["records"].is_array() &&
                                     std::all_of(doc["records"].begin(), doc["records"].end(), [](const auto& x) { return x.is_object(); });
            if (!corpus_file) throw Error("--add-to-corpus", path + " exists and is not a corpus file (format quantplan-measurements/1)");
        } else {
            doc["format"] = "quantplan-measurements/1";
            doc["title"] = "Measurements added by quantplan --check";
            doc["source"] = {{"added_by", "quantplan --check --add-to-corpus"}};
            doc["records"] = nlohmann::ordered_json::array();
        }
    }
    const check::Identified& i = r.identified;
    std::string stem = std::filesystem::path(check_file).stem().string();
    std::size_t added = 0;
    for (const check::CheckRow& row : r.rows) {
        const auto [metric, stat] = corpus_metric(row.quantity);
        if (metric.empty() || row.logged < 0) continue;
        // The same file checked twice adds nothing the second time (a point counts once in the fit).
        const auto text_at = [](const nlohmann::ordered_json& x, const char* key) {
            const auto it = x.find(key);
            return it != x.end() && it->is_string() ? it->template get<std::string>() : std::string();
        };
        const bool present = std::any_of(doc["records"].begin(), doc["records"].end(), [&](const auto& x) {
            const auto src = x.find("source");
            return src != x.end() && src->is_object() && text_at(*src, "file") == check_file && text_at(x, "metric") == metric &&
                   text_at(x, "stat") == stat;
        });
        if (present) continue;
        const std::string unit = row.unit == "bytes" ? "bytes" : row.unit;
        std::string id = "user/" + stem + "/" + row.quantity;
        for (int n = 2; std::any_of(doc["records"].begin(), doc["records"].end(), [&](const auto& x) { return text_at(x, "id") == id; }); ++n)
            id = "user/" + stem + "/" + row.quantity + "#" + std::to_string(n);
        nlohmann::ordered_json rec;
        rec["id"] = id;
        rec["metric"] = metric;
        if (!stat.empty()) rec["stat"] = stat;
        rec["value"] = row.logged;
        rec["unit"] = unit == "s" ? "s" : unit == "x" ? "x" : unit;
        rec["metric_definition"] = "as logged by the engine (quantplan --check of " + check_file + ")";
        rec["quote"] = row.as_logged;
        rec["source"] = {{"file", check_file}};
        // Settings as the file or the options stated them; defaults quantplan assumed are left out.
        const auto stated = [&](const char* key) {
            const auto it = i.from.find(key);
            return it != i.from.end() && (it->second == "log" || it->second == "option" || it->second == "result");
        };
        const auto or_null = [](bool keep, const auto& v) { return keep ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
        rec["setup"] = {{"engine", i.engine},
                        {"engine_version", or_null(!i.version.empty(), i.version)},
                        {"gpu", or_null(!i.gpu.empty(), i.gpu)},
                        {"tp", i.tp},
                        {"model", or_null(!i.model.empty(), i.model)},
                        {"scheme", i.scheme},
                        {"max_model_len", or_null(stated("max_model_len") && i.max_model_len > 0, i.max_model_len)},
                        {"kv_cache_dtype", i.kv_cache_dtype}};
        if (stated("gpu_memory_utilization"))
            rec["setup"][i.engine == "sglang" ? "mem_fraction_static" : "gpu_memory_utilization"] = i.gpu_memory_utilization;
        for (const auto& [key, value] : i.run)  // a benchmark run's concurrency and lengths
            rec["setup"][key] = value;
        doc["records"].push_back(std::move(rec));
        ++added;
    }
    write_file_atomically(path, doc.dump(2) + "\n");
    return added;
}

}  // namespace

int run_check_corpus(const CliOptions& o, std::ostream& out, std::ostream& err) {
    try {
        namespace fs = std::filesystem;
        const fs::path dir = *o.check_corpus;
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw Error("--check-corpus", dir.string() + " is not a folder");
        const check::CheckInputs in = bundled_inputs(engine_catalog());
        std::vector<check::CorpusLog> logs;
        for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
            if (e.path().extension() != ".log" || !e.is_regular_file()) continue;
            const std::string name = e.path().filename().string();
            check::CheckOptions options;
            const fs::path expect = fs::path(e.path()).replace_extension(".expect.json");
            if (fs::exists(expect))
                options = check::options_from_expectation(read_text_file(expect, expect.string(), std::uint64_t{1} << 20), expect.string());
            try {
                logs.push_back(check::check_corpus_log(name, read_log_stream(e.path().string()), options, in));
            } catch (const Error& x) {  // the reader refused the file
                check::CorpusLog refused;
                refused.name = name;
                refused.refused = x.what();
                logs.push_back(std::move(refused));
            }
        }
        if (logs.empty()) throw Error("--check-corpus", dir.string() + " holds no *.log file");
        const std::string md = check::corpus_markdown(check::summarize_corpus(std::move(logs)));
        if (o.check_corpus_out) write_file_atomically(*o.check_corpus_out, md);
        else out << md;
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

int run_check(const CliOptions& o, std::ostream& out, std::ostream& err) {
    try {
        const bool bench = file_is_json(*o.check_path);
        const std::string text = bench ? read_text_file(*o.check_path, "--check", check::kMaxLogBytes) : std::string();
        check::CheckOptions options;
        if (o.model_given) options.model = o.model;
        if (o.gpu_given) options.gpu = o.gpu;
        if (o.engine_given) options.engine = o.engine;
        if (o.tp != 1) options.tp = o.tp;
        options.gpu_p2p = o.gpu_p2p;
        options.num_scheduler_steps = o.num_scheduler_steps;
        // The serving fit's terms price the replay of a benchmark result, as they do a --serve run.
        const std::optional<engine::EngineCatalog> with_serving = with_serving_fit(o, engine_catalog());
        const check::CheckInputs in = bundled_inputs(with_serving ? *with_serving : engine_catalog());
        const check::CheckResult r = bench
                                         ? check::check_bench_result(check::read_bench_result(text, *o.check_path, static_cast<std::size_t>(o.bench_index - 1)), options, in)
                                         : check::check_startup_log(read_log_stream(*o.check_path), options, in);
        if (o.add_to_corpus) {
            const std::size_t n = add_to_corpus(r, *o.check_path, *o.add_to_corpus);
            (o.json_path && *o.json_path == "-" ? err : out) << "quantplan: " << n << " records added to " << *o.add_to_corpus
                                                              << " (use it with --corpus " << *o.add_to_corpus << ")\n";
        }
        if (o.json_path) {
            const std::string doc = nlohmann::json{{"check", check_json(r, *o.check_path)}}.dump(2) + "\n";
            if (*o.json_path == "-") out << doc;
            else write_file_atomically(*o.json_path, doc);
            return 0;
        }
        const check::Identified& i = r.identified;
        out << *o.check_path << ": " << (i.engine.empty() ? "?" : i.engine) << " " << (i.version.empty() ? "(no version line)" : i.version)
            << " [profile " << (i.profile.empty() ? "?" : i.profile) << "], model " << (i.model.empty() ? "?" : i.model) << " (" << i.scheme
            << "), GPU " << (i.gpu.empty() ? "?" : i.gpu) << ", TP " << i.tp << ", max_model_len " << i.max_model_len << ", KV " << i.kv_cache_dtype
            << "\n\n";
        out << std::left << std::setw(24) << "quantity" << std::right << std::setw(16) << "logged" << std::setw(16) << "predicted" << std::setw(9)
            << "error" << "\n";
        for (const check::CheckRow& row : r.rows) {
            char error[24] = "-";
            if (row.error_fraction) std::snprintf(error, sizeof error, "%+.1f%%", *row.error_fraction * 100.0);
            out << std::left << std::setw(24) << row.quantity << std::right << std::setw(16) << shown(row.logged, row.unit) << std::setw(16)
                << (row.predicted ? shown(*row.predicted, row.unit) : std::string("-")) << std::setw(9) << error << "\n";
        }
        if (!r.largest_difference.empty()) out << "\nlargest difference: " << r.largest_difference << "\n";
        if (!i.settings.empty()) {
            std::string logged, defaulted;
            for (const auto& [key, v] : i.settings)
                (v.from.starts_with("log") ? logged : defaulted) += (((v.from.starts_with("log") ? logged : defaulted).empty()) ? "" : ", ") + key + "=" + v.value;
            out << "\nsettings from the log: " << (logged.empty() ? "none" : logged) << "\n";
            out << "settings from engine defaults: " << (defaulted.empty() ? "none" : defaulted) << " (sources: --json -, identified.settings)\n";
        }
        for (const std::string& u : r.unresolved) out << "not identified: " << u << "\n";
        for (const std::string& n : r.notes) out << "note: " << n << "\n";
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
