// quantplan --headless --inspect PATH: what a checkpoint declares against what it holds
// (core/checkpoint/inspector.h), as a table or, with --json FILE|-, as JSON (docs/inspector.md).
#include <cstdio>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/checkpoint/inspect_json.h"

namespace quantplan::app {
namespace {

// Rows of a long list printed before "... and N more".
constexpr std::size_t kMaxListedRows = 12;

// 12,345,678
std::string grouped(std::uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string signed_grouped(std::int64_t v) {
    return (v < 0 ? "-" : v > 0 ? "+" : "") + grouped(static_cast<std::uint64_t>(v < 0 ? -v : v));
}

void print_list(std::ostream& out, const std::string& title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out << title << " (" << items.size() << "):\n";
    for (std::size_t i = 0; i < items.size() && i < kMaxListedRows; ++i) out << "  " << items[i] << "\n";
    if (items.size() > kMaxListedRows) out << "  ... and " << items.size() - kMaxListedRows << " more (all in --json)\n";
}

void print_table(const InspectReport& r, std::ostream& out) {
    out << "checkpoint " << r.path << ": " << r.files.size() << " safetensors file(s), " << r.tensors.size() << " tensors"
        << (r.has_config ? ", config.json" : ", no config.json") << "\n";
    if (r.model)
        out << "model: " << (r.model->model_type.empty() ? "?" : r.model->model_type) << ", " << r.model->num_layers << " layers, hidden "
            << r.model->hidden_size << ", vocab " << r.model->vocab_size << (r.model->is_moe() ? ", " + std::to_string(r.model->num_experts) + " experts" : "")
            << ", unquantized tensors in " << dtype_name(r.model_dtype) << "\n";
    const QuantizationConfig& q = r.quantization;
    if (!r.quantization_parsed) {
        out << "quantization: could not be read (see errors)\n";
    } else if (q.method == QuantMethod::None) {
        out << "quantization: none declared\n";
    } else {
        out << "quantization: " << q.declared_method << " (" << q.source << ")\n";
        for (const QuantRule& rule : q.rules)
            out << "  rule " << rule.name << ": " << (rule.skip ? std::string("skip") : scheme_name(rule.scheme) + ", " + rule.description) << "\n";
        if (!q.ignore.empty()) {
            out << "  not converted:";
            for (std::size_t i = 0; i < q.ignore.size() && i < kMaxListedRows; ++i) out << " " << q.ignore[i].text;
            if (q.ignore.size() > kMaxListedRows) out << " ... (" << q.ignore.size() << ")";
            out << "\n";
        }
        if (q.kv_cache) out << "  KV cache: " << q.kv_cache->type << " " << q.kv_cache->num_bits << "-bit, " << q.kv_cache->strategy << "\n";
    }
    if (!r.rule_uses.empty()) {
        out << "\nschemes per module:\n";
        for (const RuleUse& u : r.rule_uses) {
            out << "  " << std::left << std::setw(18) << u.scheme << std::right;
            for (std::size_t i = 0; i < u.roles.size(); ++i) out << (i ? ", " : "") << u.roles[i].first << " " << u.roles[i].second;
            out << (u.rule.empty() ? "" : "  [" + u.rule + "]") << "\n";
        }
    }
    if (!r.roles.empty()) {
        out << "\n" << std::left << std::setw(16) << "bytes by role" << std::right << std::setw(18) << "predicted";
        if (r.compared) out << std::setw(18) << "actual" << std::setw(16) << "difference";
        out << "\n";
        for (const RoleBytes& rb : r.roles) {
            out << "  " << std::left << std::setw(14) << rb.role << std::right << std::setw(18) << grouped(rb.predicted_bytes);
            if (r.compared)
                out << std::setw(18) << grouped(rb.actual_bytes)
                    << std::setw(16) << signed_grouped(static_cast<std::int64_t>(rb.actual_bytes) - static_cast<std::int64_t>(rb.predicted_bytes));
            out << "\n";
        }
        out << "  " << std::left << std::setw(14) << "tensors" << std::right << std::setw(18) << grouped(r.predicted_bytes);
        if (r.compared) out << std::setw(18) << grouped(r.actual_bytes) << std::setw(16) << signed_grouped(r.difference_bytes());
        out << "\n";
        if (r.compared) {
            out << "  " << std::left << std::setw(14) << "headers" << std::right << std::setw(18) << "" << std::setw(18) << grouped(r.header_bytes) << "\n";
            out << "  " << std::left << std::setw(14) << "files" << std::right << std::setw(18) << grouped(r.predicted_bytes + r.header_bytes) << std::setw(18)
                << grouped(r.file_bytes) << std::setw(16) << signed_grouped(static_cast<std::int64_t>(r.file_bytes) - static_cast<std::int64_t>(r.predicted_bytes + r.header_bytes))
                << "\n";
        }
    }
    if (r.compared && r.model) {
        if (r.mismatches.empty()) {
            out << "\nno mismatch larger than the " << grouped(r.tolerance_bytes) << " header bytes\n";
        } else {
            std::vector<std::string> rows;
            for (const Mismatch& m : r.mismatches)
                rows.push_back(m.level + " " + m.name + ": " + signed_grouped(m.difference_bytes()) + " B; " + m.detail);
            out << "\n";
            print_list(out, "mismatches larger than the " + grouped(r.tolerance_bytes) + " header bytes", rows);
        }
        print_list(out, "unexpected tensors", r.unexpected);
        print_list(out, "missing tensors", r.missing);
    }
    if (!r.engines.empty()) {
        out << "\nengines" << (r.engine_gpu.empty() ? "" : " on " + r.engine_gpu) << ":\n";
        for (const EngineResolution& e : r.engines) {
            out << "  " << e.snapshot->stamp() << ":\n    ";
            if (!e.registered) {
                out << "does not register '" << r.quantization.declared_method << "'\n";
            } else {
                out << r.quantization.declared_method;
                if (e.resolved_method != r.quantization.declared_method) out << " -> " << e.resolved_method;
                if (!e.scheme.empty()) out << " (" << e.scheme << ")";
                out << ", kernel " << (e.kernel.empty() ? "not recorded" : e.kernel) << " (" << kernel_class_name(e.kernel_class)
                    << (e.kernel_verified ? "" : ", assumed") << ")";
                if (e.optimized) out << (*e.optimized ? ", optimized" : ", not in the optimized list");
                out << "\n";
            }
            for (const std::string& x : e.errors) out << "    refuses: " << x << "\n";
            for (const std::string& x : e.warnings) out << "    logs: \"" << x << "\"\n";
        }
    }
    if (!r.notes.empty()) {
        out << "\n";
        print_list(out, "notes", r.notes);
    }
    if (!r.warnings.empty()) {
        out << "\n";
        print_list(out, "warnings", r.warnings);
    }
    if (!r.errors.empty()) {
        out << "\n";
        print_list(out, "errors", r.errors);
    }
}

}  // namespace

int run_inspect(const CliOptions& options, std::ostream& out, std::ostream& err) {
    InspectReport report;
    try {
        InspectOptions opts;
        opts.gpu = resolve_gpu(options.gpu, gpus_dir());
        opts.kv_format = kv_format_name(parse_kv_format(options.kv));
        report = inspect_checkpoint(read_checkpoint(*options.inspect_path), opts);
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
    if (options.json_path) {
        const std::string text = inspect_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        if (const int rc = write_json_text(text, *options.json_path, out, err); rc != 0) return rc;
    } else {
        print_table(report, out);
    }
    for (const std::string& e : report.errors) err << "quantplan: " << e << "\n";
    return report.errors.empty() ? 0 : 1;
}

}  // namespace quantplan::app
