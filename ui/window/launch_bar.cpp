#include "ui/window/launch_bar.h"

#include <QtGui/QClipboard>
#include <QtGui/QGuiApplication>
#include <QtWidgets/QFileDialog>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QPushButton>

#include "core/base/error.h"

namespace quantplan::ui {

LaunchBar::LaunchBar(QWidget* parent) : QWidget(parent) {
    copy_ = new QPushButton(tr("Copy launch command"), this);
    copy_->setObjectName(QStringLiteral("copyLaunchCommand"));
    save_ = new QPushButton(tr("Save deployment…"), this);
    save_->setObjectName(QStringLiteral("saveDeployment"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addStretch(1);
    layout->addWidget(copy_);
    layout->addWidget(save_);
    connect(copy_, &QPushButton::clicked, this, [this] { copyLaunchCommand(); });
    connect(save_, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Save deployment into an empty folder"));
        if (!dir.isEmpty()) saveDeployment(dir);
    });
    updateEnabled();
}

void LaunchBar::setDataDir(const std::filesystem::path& dir) {
    data_dir_ = dir;
    loaded_.clear();
    updateEnabled();
}

void LaunchBar::setProvider(const std::string& engine, Provider provider) {
    engine_ = engine;
    provider_ = std::move(provider);
    updateEnabled();
}

void LaunchBar::updateEnabled() {
    const bool ready = !data_dir_.empty() && provider_ != nullptr;
    copy_->setEnabled(ready);
    save_->setEnabled(ready);
    const QString why = data_dir_.empty() ? tr("No launch data (assets/engines/args/) was found.") : QString();
    copy_->setToolTip(why.isEmpty() ? tr("The command that starts %1 as this plan assumed it, checked against that version's arguments.")
                                          .arg(QString::fromStdString(engine_))
                                    : why);
    save_->setToolTip(why.isEmpty() ? tr("launch.sh, docker-run.sh, a Kubernetes Deployment and Service, and the checkpoint recipe, "
                                         "for each configuration.")
                                    : why);
}

std::vector<launch::Launch> LaunchBar::launches(const launch::LaunchData** data) {
    if (!provider_ || data_dir_.empty()) throw Error("launch", "no plan to launch yet");
    auto it = loaded_.find(engine_);
    if (it == loaded_.end()) it = loaded_.emplace(engine_, launch::load_launch_data(data_dir_, engine_)).first;
    *data = &it->second;
    return provider_(it->second);
}

QString LaunchBar::copyLaunchCommand() {
    try {
        const launch::LaunchData* data = nullptr;
        const std::vector<launch::Launch> l = launches(&data);
        if (l.empty()) throw Error("launch", "nothing to launch");
        const QString text = QString::fromStdString(launch::shell_command(l.front().argv, l.front().env));
        QGuiApplication::clipboard()->setText(text);
        return text;
    } catch (const Error& e) {
        emit errorMessage(tr("Launch command: %1").arg(QString::fromStdString(e.what())));
        return {};
    }
}

bool LaunchBar::saveDeployment(const QString& dir) {
    try {
        const launch::LaunchData* data = nullptr;
        const std::vector<launch::Launch> l = launches(&data);
        launch::write_emit_folder(dir.toStdString(), l, data->deployment);
        return true;
    } catch (const Error& e) {
        emit errorMessage(tr("Save deployment: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
}

}  // namespace quantplan::ui
