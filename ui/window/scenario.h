#pragma once
// Lecture-mode scenarios: a named walk through setups (assets/scenarios/*.json), and the saved
// setup, which is a scenario of one step. Format (docs/gui.md):
//   {"name": "...", "steps": [{"title": "...", "note": "...", <setup keys: model, gpu, schemes,
//    batch, context, kv, kernel, profile, gpu_mem_util, tp, ...>, "panel": "crossover"}, ...]}
// "panel" (optional, window only) names the panel the step shows: crossover, error, checkpoint,
// memory or decision; the headless report ignores it.
// A step lists only what it changes: it starts from the previous step's setup, and the first step
// from the window's default setup, so that a scenario shows the same thing on every machine.
#include <vector>

#include <QtCore/QByteArray>
#include <QtCore/QString>

#include "ui/window/planner_setup.h"

namespace quantplan::ui {

// Scenario files larger than this are refused before reading (no scenario is near it).
inline constexpr qint64 kMaxScenarioFileBytes = 1 << 20;

// The panel names a step may give (Panel::exportName() of each panel).
const QStringList& scenario_panel_names();

// One step of a walk: a title, a sentence for the audience, the full setup it shows, and the
// panel to bring forward (empty: leave the current one).
struct ScenarioStep {
    QString title;
    QString note;
    PlannerSetup setup;
    QString panel;
};

// A named sequence of steps; never empty once parsed.
struct Scenario {
    QString name;
    std::vector<ScenarioStep> steps;
};

// Parses scenario JSON. `source` names the file in errors; `start` is the setup the first step
// starts from. Throws Error naming "<source>: steps[i]: <key>" for anything malformed.
Scenario parse_scenario(const QByteArray& json, const QString& source, const PlannerSetup& start = default_setup());

// Reads and parses a scenario file (refusing files over kMaxScenarioFileBytes).
Scenario load_scenario(const QString& path, const PlannerSetup& start = default_setup());

// The scenario as JSON text; every step lists every setup key, so the file does not depend on
// the defaults of the version that reads it.
QByteArray scenario_json(const Scenario& scenario);

// Writes `scenario` to `path` atomically (core/base/atomic_file.h). Throws Error naming the path.
void save_scenario(const QString& path, const Scenario& scenario);

// A scenario of one step holding `setup`: the "save setup" file.
Scenario setup_scenario(const PlannerSetup& setup, const QString& name);

}  // namespace quantplan::ui
