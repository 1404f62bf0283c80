#include "app/render/CancellableFilter.h"

#include <vtkAlgorithm.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkNew.h>

namespace medseg::render {
namespace {
void abortWhenCancelled(vtkObject* caller, unsigned long, void* clientData, void*) {
  const auto* cancel = static_cast<const Cancellation*>(clientData);
  if (cancel->cancelled()) static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
}
}  // namespace

void updateCancellable(vtkAlgorithm* filter, const Cancellation& cancel) {
  cancel.throwIfCancelled();
  vtkNew<vtkCallbackCommand> observer;
  observer->SetCallback(abortWhenCancelled);
  observer->SetClientData(const_cast<Cancellation*>(&cancel));  // only read
  const unsigned long tag = filter->AddObserver(vtkCommand::ProgressEvent, observer);
  filter->Update();
  filter->RemoveObserver(tag);
  cancel.throwIfCancelled();
}

}  // namespace medseg::render
