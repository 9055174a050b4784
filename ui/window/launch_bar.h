#pragma once
// "Copy launch command" and "Save deployment…" under the decision and capacity panels: the plan
// shown turned into the command that starts the engine it assumed, its docker run and Kubernetes
// objects and its checkpoint recipe (core/launch, docs/launch.md).
#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include <QtWidgets/QWidget>

#include "core/launch/plan_launch.h"

QT_BEGIN_NAMESPACE
class QPushButton;
QT_END_NAMESPACE

namespace quantplan::ui {

class LaunchBar : public QWidget {
    Q_OBJECT
public:
    // The launches of the plan shown, from the engine's launch data; throws Error when there is
    // nothing to launch (no plan yet, nothing fits, a scheme the engine version cannot serve).
    using Provider = std::function<std::vector<launch::Launch>(const launch::LaunchData&)>;

    explicit LaunchBar(QWidget* parent = nullptr);

    // The folder holding models/ and assets/ (empty: the buttons stay disabled and say why).
    void setDataDir(const std::filesystem::path& dir);
    // The engine ("vllm", "sglang") and the provider of the plan shown; an empty provider disables.
    void setProvider(const std::string& engine, Provider provider);

    // Copies the first launch's command (environment and argv) to the clipboard and returns it;
    // on failure emits errorMessage and returns an empty string.
    QString copyLaunchCommand();
    // Writes every launch into `dir` as --emit-out does; false (and errorMessage) on failure.
    bool saveDeployment(const QString& dir);

    QPushButton* copyButton() const { return copy_; }
    QPushButton* saveButton() const { return save_; }

signals:
    void errorMessage(const QString& message);

private:
    std::vector<launch::Launch> launches(const launch::LaunchData** data);
    void updateEnabled();

    std::filesystem::path data_dir_;
    std::string engine_;
    Provider provider_;
    std::map<std::string, launch::LaunchData> loaded_;  // by engine
    QPushButton* copy_ = nullptr;
    QPushButton* save_ = nullptr;
};

}  // namespace quantplan::ui
