#include "core/errorsim/errorsim_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/base/error.h"
#include "core/errorsim/quantizer.h"

namespace quantplan::errorsim {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        parts.push_back(trim(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return parts;
}

// Entries of a comma-separated list, lower-cased; an empty entry is an error.
std::vector<std::string> list_entries(std::string_view list, const std::string& option, const char* what) {
    std::vector<std::string> out;
    for (const std::string& e : split(list, ',')) {
        if (e.empty()) throw Error(option, std::string("empty ") + what + " in '" + std::string(list) + "'");
        out.push_back(lower(e));
    }
    return out;
}

// A positive decimal integer, or nullopt.
std::optional<std::int64_t> positive_int(std::string_view s) {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v <= 0) return std::nullopt;
    return v;
}

std::string fixed(double v, int digits) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string pct(double fraction) {
    const double p = 100.0 * fraction;
    return fixed(p, p < 1.0 ? 3 : 2) + "%";
}

bool fixed_granularity(const WeightQuantSpec& w) {
    return w.format == DType::Fp4E2M1 && w.scale_format && (*w.scale_format == DType::Fp8E4M3 || *w.scale_format == DType::Fp8E8M0);
}

}  // namespace

ErrorsimRequest default_errorsim_request() {
    ErrorsimRequest r;
    r.formats = parse_weight_formats("int4,int8", "--errorsim-formats");
    r.granularities = parse_granularities("tensor,channel,g128,g64,g32", "--errorsim-granularities");
    r.methods = parse_methods("rtn", "--errorsim-methods");
    return r;
}

std::vector<WeightQuantSpec> parse_weight_formats(std::string_view list, const std::string& option) {
    std::vector<WeightQuantSpec> out;
    for (const std::string& e : list_entries(list, option, "format")) {
        WeightQuantSpec w;
        w.group = GroupShape::per_group(128);
        if (e == "nvfp4") {
            w = WeightQuantSpec::nvfp4();
        } else if (e == "mxfp4") {
            w = WeightQuantSpec::mxfp4();
        } else if (e == "fp4" || e == "fp4_e2m1" || e == "e2m1") {
            w.format = DType::Fp4E2M1;
            w.symmetric = true;
            w.scale_format = DType::Fp16;
        } else if (e == "fp8" || e == "fp8_e4m3" || e == "e4m3") {
            w.format = DType::Fp8E4M3;
            w.symmetric = true;
        } else if (e == "fp8_e5m2" || e == "e5m2" || e == "fp8e5m2") {
            w.format = DType::Fp8E5M2;
            w.symmetric = true;
        } else if (e.rfind("int", 0) == 0) {
            const std::vector<std::string> parts = split(e, '-');
            const auto bits = positive_int(std::string_view(parts[0]).substr(3));
            const auto dtype = bits ? int_dtype_with_bits(static_cast<int>(*bits)) : std::nullopt;
            if (!dtype || *bits > 8 || *bits < 2) throw Error(option, "integer formats are int2 to int8, got '" + e + "'");
            w.format = *dtype;
            w.symmetric = *bits >= 8;
            if (parts.size() > 2) throw Error(option, "'" + e + "': at most one of -sym, -asym");
            if (parts.size() == 2) {
                if (parts[1] == "sym") w.symmetric = true;
                else if (parts[1] == "asym") w.symmetric = false;
                else throw Error(option, "'" + e + "': unknown suffix '" + parts[1] + "' (sym or asym)");
            }
        } else {
            throw Error(option, "unknown weight format '" + e + "' (int2..int8[-sym|-asym], fp8, fp8_e5m2, fp4, nvfp4, mxfp4)");
        }
        out.push_back(w);
    }
    return out;
}

std::vector<GroupShape> parse_granularities(std::string_view list, const std::string& option) {
    std::vector<GroupShape> out;
    for (const std::string& e : list_entries(list, option, "granularity")) {
        if (e == "tensor" || e == "per-tensor") {
            out.push_back(GroupShape::per_tensor());
        } else if (e == "channel" || e == "ch" || e == "per-channel") {
            out.push_back(GroupShape::per_row());
        } else if (e == "ladder") {
            for (GroupShape g : {GroupShape::per_tensor(), GroupShape::per_row(), GroupShape::per_group(128), GroupShape::per_group(64),
                                 GroupShape::per_group(32)})
                out.push_back(g);
        } else if (e[0] == 'g') {
            const auto g = positive_int(std::string_view(e).substr(1));
            if (!g) throw Error(option, "group size must be a positive integer, got '" + e.substr(1) + "'");
            out.push_back(GroupShape::per_group(*g));
        } else if (e.rfind("block", 0) == 0) {
            const std::string dims = e.substr(5);
            const std::size_t x = dims.find('x');
            const auto r = positive_int(std::string_view(dims).substr(0, x));
            const auto c = x == std::string::npos ? r : positive_int(std::string_view(dims).substr(x + 1));
            if (!r || !c) throw Error(option, "block size must be positive integers, got '" + dims + "'");
            out.push_back(GroupShape::block(*r, *c));
        } else {
            throw Error(option, "unknown granularity '" + e + "' (tensor, channel, g<N>, block<R>x<C>, ladder)");
        }
    }
    return out;
}

std::vector<NamedMethod> parse_methods(std::string_view list, const std::string& option) {
    std::vector<NamedMethod> out;
    for (const std::string& e : list_entries(list, option, "method")) {
        NamedMethod m;
        m.name = e;
        for (const std::string& part : split(e, '+')) {
            if (part == "rtn") continue;
            if (part == "gptq") m.toggles.gptq = true;
            else if (part == "gptq-actorder" || part == "gptq-act-order") m.toggles.gptq = m.toggles.act_order = true;
            else if (part == "awq") m.toggles.awq = true;
            else if (part == "awq-clip") m.toggles.awq = m.toggles.awq_clip_search = true;
            else if (part.rfind("smoothquant", 0) == 0 || part.rfind("sq", 0) == 0) {
                const std::string head = part.rfind("smoothquant", 0) == 0 ? "smoothquant" : "sq";
                const std::string rest = part.substr(head.size());
                m.toggles.smoothquant = true;
                if (!rest.empty()) {
                    double alpha = -1.0;
                    const auto [ptr, ec] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), alpha);
                    if (rest[0] != '@' || ec != std::errc() || ptr != rest.data() + rest.size() || !(alpha >= 0.0 && alpha <= 1.0))
                        throw Error(option, "'" + part + "': SmoothQuant's alpha is written smoothquant@A with A in [0, 1]");
                    m.toggles.smoothquant_alpha = alpha;
                }
            } else {
                throw Error(option, "unknown method '" + part + "' (rtn, gptq, gptq-actorder, awq, awq-clip, smoothquant[@A], joined with +)");
            }
        }
        if (m.toggles.awq && m.toggles.smoothquant)
            throw Error(option, "'" + e + "': AWQ and SmoothQuant both choose the per-input-channel scale; combine either with gptq instead");
        out.push_back(m);
    }
    return out;
}

ActivationQuantSpec parse_activation(std::string_view text, const std::string& option) {
    const std::string t = lower(trim(text));
    ActivationQuantSpec a;
    if (t == "a16" || t == "bf16" || t == "fp16" || t == "16" || t == "none") return a;
    const std::vector<std::string> parts = split(t, '-');
    const std::string& f = parts[0];
    if (f == "fp8" || f == "fp8_e4m3" || f == "e4m3") a.format = DType::Fp8E4M3;
    else if (f == "fp8_e5m2" || f == "e5m2") a.format = DType::Fp8E5M2;
    else if (f.rfind("int", 0) == 0) {
        const auto bits = positive_int(std::string_view(f).substr(3));
        if (!bits || *bits < 2 || *bits > 8) throw Error(option, "integer activations are int2 to int8, got '" + f + "'");
        a.format = int_dtype_with_bits(static_cast<int>(*bits));
    } else {
        throw Error(option, "unknown activation setting '" + std::string(text) + "' (a16, int8, fp8, fp8_e5m2, with -tensor, -static, -asym)");
    }
    bool token_asked = false;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::string& p = parts[i];
        if (p == "tensor") a.per_token = false;
        else if (p == "token") a.per_token = token_asked = true;
        else if (p == "static") a.is_static = true;
        else if (p == "dynamic") a.is_static = false;
        else if (p == "asym") a.symmetric = false;
        else if (p == "sym") a.symmetric = true;
        else throw Error(option, "unknown activation modifier '" + p + "' (tensor, token, static, dynamic, asym)");
    }
    if (a.is_static) {
        if (token_asked) throw Error(option, "static activation scales are per tensor (a per-token scale is computed at run time)");
        a.per_token = false;
    }
    if (!a.symmetric && !dtype_is_integer(*a.format)) throw Error(option, "float activations carry no zero point (-asym is for integers)");
    return a;
}

ErrorsimReport run_errorsim(const ErrorsimRequest& request) {
    if (request.formats.empty()) throw Error("--errorsim-formats", "no weight format to run");
    if (request.granularities.empty()) throw Error("--errorsim-granularities", "no granularity to run");
    if (request.methods.empty()) throw Error("--errorsim-methods", "no method to run");
    ErrorsimReport report;
    report.request = request;
    Layer layer;
    if (request.tensor) {
        const std::size_t colon = request.tensor->rfind(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == request.tensor->size())
            throw Error("--errorsim-tensor", "expected FILE.safetensors:TENSOR_NAME, got '" + *request.tensor + "'");
        const std::string file = request.tensor->substr(0, colon), name = request.tensor->substr(colon + 1);
        std::optional<RealWeights> activations;
        if (request.activation_tensor) {
            const std::size_t c2 = request.activation_tensor->rfind(':');
            if (c2 == std::string::npos || c2 == 0 || c2 + 1 == request.activation_tensor->size())
                throw Error("--errorsim-activation-tensor", "expected FILE.safetensors:TENSOR_NAME, got '" + *request.activation_tensor + "'");
            activations = read_safetensors_tensor(request.activation_tensor->substr(0, c2), request.activation_tensor->substr(c2 + 1));
        }
        layer = layer_from_weights(read_safetensors_tensor(file, name), request.layer, activations ? &*activations : nullptr);
        report.source = name + " from " + file + (activations ? ", activations " + activations->name : ", synthetic activations");
    } else {
        if (request.activation_tensor) throw Error("--errorsim-activation-tensor", "supplied activations need weights from --errorsim-tensor");
        layer = generate_layer(request.layer);
        report.source = "synthetic";
    }
    report.request.layer = layer.spec();
    report.out_features = layer.spec().out_features;
    report.in_features = layer.spec().in_features;
    for (const WeightQuantSpec& format : request.formats) {
        std::vector<GroupShape> groups = request.granularities;
        if (fixed_granularity(format)) groups = {format.group};
        for (const GroupShape& g : groups) {
            for (const NamedMethod& m : request.methods) {
                ErrorLabConfig c;
                c.weights = format;
                c.weights.group = g;
                c.activations = request.activations;
                c.methods = m.toggles;
                report.rows.push_back(ErrorsimRow{weight_format_name(c.weights), granularity_name(g), m.name, c.weights, run_error_lab(c, layer)});
            }
        }
    }
    // The KV formats of core/scheme/scheme.h's parse_kv_format, with the layer's outliers and seed.
    const struct {
        const char* name;
        DType format;
        bool per_token_head;
        bool symmetric;
    } kv_formats[] = {{"fp8", DType::Fp8E4M3, false, true},
                      {"fp8_e5m2", DType::Fp8E5M2, false, true},
                      {"int8", DType::Int8, true, true},
                      {"int4", DType::Int4, true, false}};
    for (const auto& f : kv_formats) {
        KvLabConfig kv;
        kv.format = f.format;
        kv.per_token_head = f.per_token_head;
        kv.symmetric = f.symmetric;
        kv.outlier_magnitude = request.layer.outlier_magnitude;
        kv.seed = request.layer.seed;
        report.kv_cache.push_back(KvRow{f.name, kv, run_kv_lab(kv)});
    }
    return report;
}

std::string activation_name(const ActivationQuantSpec& a) {
    if (!a.format) return "a16";
    std::string s(dtype_name(*a.format));
    s += a.is_static ? "-static" : (a.per_token ? "-token" : "-tensor");
    if (!a.symmetric) s += "-asym";
    return s;
}

std::string errorsim_table(const ErrorsimReport& r) {
    std::ostringstream out;
    const LayerSpec& l = r.request.layer;
    out << "error lab: " << r.source << ", " << r.out_features << " x " << r.in_features << " weights, " << l.calibration_tokens
        << " calibration + " << l.heldout_tokens << " held-out tokens";
    if (r.source == "synthetic") out << ", " << l.outlier_channels << " outlier channels at " << fixed(l.outlier_magnitude, 0) << "x, seed " << l.seed;
    out << ", activations " << activation_name(r.request.activations) << "\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %-12s %-16s %8s %10s %10s %10s %7s %7s %8s\n", "format", "granularity", "method", "eff.bits",
                  "layer cal", "held-out", "weights", "levels", "act.lv", "spread");
    out << line;
    for (const ErrorsimRow& row : r.rows) {
        const ErrorLabResult& e = row.result;
        const std::string act_levels = e.median_levels_activation_channel > 0.0 ? fixed(e.median_levels_activation_channel, 0) : "-";
        std::snprintf(line, sizeof line, "%-10s %-12s %-16s %8.3f %10s %10s %10s %7.0f %7s %8s\n", row.format.c_str(), row.granularity.c_str(),
                      row.method.c_str(), e.effective_bits, pct(e.layer_error_calibration).c_str(), pct(e.layer_error_heldout).c_str(),
                      pct(e.weight_error).c_str(), e.median_levels_per_group, act_levels.c_str(), (fixed(e.weight_spread_after, 1) + "x").c_str());
        out << line;
    }
    if (!r.kv_cache.empty()) {
        const KvLabConfig& c = r.kv_cache.front().config;
        out << "\nKV cache (" << c.tokens << " tokens x " << c.heads << " heads x " << c.head_dim << ", " << c.outlier_channels
            << " loud channels per head at " << fixed(c.outlier_magnitude, 0) << "x):\n";
        for (const KvRow& kv : r.kv_cache) {
            std::snprintf(line, sizeof line, "  %-9s %-26s %6.3f bits  error %9s  median channel %4.0f levels\n", kv.format.c_str(),
                          kv.config.per_token_head ? "scale per token and head" : "one scale per tensor", kv.result.effective_bits,
                          pct(kv.result.relative_error).c_str(), kv.result.median_levels_channel);
            out << line;
        }
    }
    // The decision log of the first row of every format and method.
    std::vector<std::string> shown;
    for (const ErrorsimRow& row : r.rows) {
        const std::string key = row.format + " " + row.method;
        if (std::find(shown.begin(), shown.end(), key) != shown.end()) continue;
        shown.push_back(key);
        out << "\ndecision log (" << row.format << ", " << row.granularity << ", " << row.method << "):\n";
        for (const std::string& s : row.result.log) out << "  - " << s << "\n";
    }
    return out.str();
}

}  // namespace quantplan::errorsim
