#pragma once
// The window's `--check`: a startup log or benchmark result read and priced (File > Check against
// a log), its side-by-side table of logged against predicted, and the measured TPOT it adds to the
// crossover chart.
#include <optional>
#include <string>
#include <vector>

#include <QtCore/QString>
#include <QtWidgets/QDialog>

#include "core/check/check.h"
#include "core/plan/measured_overlay.h"

namespace quantplan::ui {

// Reads `path` (at most check::kMaxLogBytes) and checks it with `in`. What the file does not name
// (the GPU, the model), `fallback_gpu` and `fallback_model` stand in for, each with a note. Throws
// Error with the one line the window shows.
check::CheckResult run_window_check(const QString& path, const check::CheckInputs& in, const std::string& fallback_gpu,
                                    const std::string& fallback_model);

// A benchmark result's measured TPOT at its concurrency, as a point for the crossover chart (none
// for a startup log, or when no scheme was identified).
std::vector<MeasuredStepPoint> check_step_points(const check::CheckResult& r);

// The side-by-side table: a summary line of what was identified, one row per quantity (logged,
// predicted, error) and the notes below. Object names checkDialog, checkSummary, checkTable and
// checkFooter (the window tests find them).
class CheckDialog : public QDialog {
    Q_OBJECT
public:
    explicit CheckDialog(QWidget* parent = nullptr);
    // Fills the dialog from `r`, titled with the file's name.
    void showResult(const check::CheckResult& r, const QString& file_name);
};

}  // namespace quantplan::ui
