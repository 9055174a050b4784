#include "core/errorsim/errorsim_json.h"

#include <cmath>

namespace quantplan::errorsim {

namespace {

// NaN and infinities have no JSON spelling: they become null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json error_lab_result_json(const ErrorLabResult& r) {
    nlohmann::json j;
    j["layer_error_calibration_fraction"] = number(r.layer_error_calibration);
    j["layer_error_heldout_fraction"] = number(r.layer_error_heldout);
    j["weight_error_fraction"] = number(r.weight_error);
    j["effective_bits"] = number(r.effective_bits);
    j["median_levels_per_group"] = number(r.median_levels_per_group);
    j["median_levels_activation_channel"] = number(r.median_levels_activation_channel);
    j["weight_spread_before_ratio"] = number(r.weight_spread_before);
    j["weight_spread_after_ratio"] = number(r.weight_spread_after);
    j["awq_alpha"] = r.awq_alpha ? number(*r.awq_alpha) : nlohmann::json(nullptr);
    j["log"] = r.log;
    return j;
}

nlohmann::json errorsim_json(const ErrorsimReport& report) {
    const LayerSpec& l = report.request.layer;
    nlohmann::json j;
    j["source"] = report.source;
    j["layer"] = {{"out_features", report.out_features},
                  {"in_features", report.in_features},
                  {"calibration_tokens", l.calibration_tokens},
                  {"heldout_tokens", l.heldout_tokens},
                  {"outlier_channels", l.outlier_channels},
                  {"outlier_magnitude_ratio", number(l.outlier_magnitude)},
                  {"seed", l.seed},
                  {"correlated_activations", l.correlated_activations},
                  {"spectrum_decay", number(l.spectrum_decay)}};
    const ActivationQuantSpec& a = report.request.activations;
    j["activations"] = {{"name", activation_name(a)},
                        {"format", a.format ? nlohmann::json(std::string(dtype_name(*a.format))) : nlohmann::json(nullptr)},
                        {"per_token", a.per_token},
                        {"static", a.is_static},
                        {"symmetric", a.symmetric}};
    nlohmann::json rows = nlohmann::json::array();
    for (const ErrorsimRow& row : report.rows) {
        nlohmann::json r = error_lab_result_json(row.result);
        r["format"] = row.format;
        r["granularity"] = row.granularity;
        r["method"] = row.method;
        r["symmetric"] = row.weights.symmetric;
        rows.push_back(std::move(r));
    }
    j["rows"] = std::move(rows);
    nlohmann::json kv = nlohmann::json::array();
    for (const KvRow& row : report.kv_cache)
        kv.push_back({{"format", row.format},
                      {"per_token_head", row.config.per_token_head},
                      {"tokens", row.config.tokens},
                      {"heads", row.config.heads},
                      {"head_dim", row.config.head_dim},
                      {"relative_error_fraction", number(row.result.relative_error)},
                      {"effective_bits", number(row.result.effective_bits)},
                      {"median_levels_channel", number(row.result.median_levels_channel)},
                      {"log", row.result.log}});
    j["kv_cache"] = std::move(kv);
    return j;
}

}  // namespace quantplan::errorsim
