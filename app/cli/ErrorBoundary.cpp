#include "app/cli/ErrorBoundary.h"

#include <iostream>
#include <new>
#include <string>

#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/plugin/PluginError.h"
#include "core/util/Interrupt.h"

namespace medseg::cli {
namespace {
int reportError(CliContext& context, const std::string& message, int code) {
  if (context.json)
    context.reporter().emit({{"event", "error"}, {"message", message}, {"exit_code", code}});
  else
    std::cerr << "medseg: error: " << message << '\n';
  return code;
}
}  // namespace

int runWithExitCode(CliContext& context, const std::function<int()>& action) {
  try {
    return action ? action() : kUsage;
  } catch (const Interrupted& e) {
    return reportError(context, e.what(), kInterrupted);
  } catch (const ImageIOError& e) {
    return reportError(context, e.what(), kBadInput);
  } catch (const DatasetError& e) {
    return reportError(context, e.what(), kBadInput);
  } catch (const InputError& e) {
    return reportError(context, e.what(), kBadInput);
  } catch (const plugin::PluginError& e) {  // no such plugin, refused, or not of the kind asked for
    return reportError(context, e.what(), kBadInput);
  } catch (const std::bad_alloc&) {
    return reportError(context, "out of memory; use a smaller patch, batch or image", kFailure);
  } catch (const std::exception& e) {
    return reportError(context, e.what(), kFailure);
  }
}

}  // namespace medseg::cli
