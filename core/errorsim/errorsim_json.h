#pragma once
// The `errorsim` section of the headless JSON document.
#include <nlohmann/json.hpp>

#include "core/errorsim/errorsim_request.h"

namespace quantplan::errorsim {

// One result as JSON: every readout with its unit in the key (fractions as `_fraction`).
nlohmann::json error_lab_result_json(const ErrorLabResult& result);

// The `errorsim` section: the layer spec, the activation setting and one entry per row
// ({format, granularity, method, layer_error_calibration_fraction, ...}).
nlohmann::json errorsim_json(const ErrorsimReport& report);

}  // namespace quantplan::errorsim
