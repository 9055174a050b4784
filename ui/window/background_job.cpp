#include "ui/window/background_job.h"

#include <exception>

#include <QtCore/QMetaObject>
#include <QtCore/QPointer>
#include <QtCore/QThread>

namespace quantplan::ui {

// One job's shared state: its cancellation flag and the object its reports go to.
struct BackgroundJob::State final : JobContext {
    std::atomic<bool> cancel_requested{false};
    QPointer<BackgroundJob> owner;  // read only on the GUI thread

    bool cancelled() const override { return cancel_requested.load(std::memory_order_relaxed); }

    void report(int percent, const QString& text) override {
        if (cancelled()) return;
        BackgroundJob* target = owner.data();
        if (!target) return;
        // `this` stays alive with the thread; the owner waits for the thread before it dies.
        QMetaObject::invokeMethod(
            target,
            [self = this, target, percent, text] {
                if (target->current_.get() == self && !self->cancelled()) emit target->progress(percent, text);
            },
            Qt::QueuedConnection);
    }
};

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {}

BackgroundJob::~BackgroundJob() {
    if (current_) current_->cancel_requested = true;
    for (QThread* thread : findChildren<QThread*>()) thread->requestInterruption();
    waitForThreads();
}

void BackgroundJob::waitForThreads() {
    for (QThread* thread : findChildren<QThread*>()) thread->wait();
}

void BackgroundJob::cancel() {
    if (!current_) return;
    current_->cancel_requested = true;
    current_.reset();
    if (running_) {
        running_ = false;
        emit cancelled();
    }
}

void BackgroundJob::start_erased(const QString& label, ErasedWork work) {
    if (current_) {
        current_->cancel_requested = true;
        current_.reset();
    }
    auto state = std::make_shared<State>();
    state->owner = this;
    current_ = state;
    running_ = true;
    QThread* thread = QThread::create([this, state, work = std::move(work)] {
        std::function<void()> deliver;
        QString error;
        bool was_cancelled = false;
        try {
            deliver = work(*state);
        } catch (const JobCancelled&) {
            was_cancelled = true;
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        } catch (...) {
            error = QStringLiteral("unknown error");
        }
        // The owner waits for this thread in its destructor, so `this` is alive here; the queued
        // call is dropped if the owner is destroyed before the event loop runs it.
        QMetaObject::invokeMethod(
            this,
            [this, state, deliver = std::move(deliver), error, was_cancelled] {
                if (current_ != state) return;  // superseded or cancelled: drop silently
                current_.reset();
                running_ = false;
                if (was_cancelled || state->cancelled()) {
                    emit cancelled();
                } else if (!error.isEmpty() || !deliver) {
                    emit failed(error.isEmpty() ? QStringLiteral("the job produced no result") : error);
                } else {
                    try {
                        deliver();
                        emit finished();
                    } catch (const std::exception& e) {
                        emit failed(QString::fromUtf8(e.what()));
                    }
                }
            },
            Qt::QueuedConnection);
    });
    thread->setParent(this);
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    emit started(label);
    thread->start();
}

}  // namespace quantplan::ui
