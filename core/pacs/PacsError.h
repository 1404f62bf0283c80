#pragma once
// A DICOM network operation that failed on the way (peer unreachable, association aborted, a
// retrieve cut off, the peer refusing a request): exit 4. Mistakes the user can fix in the request
// itself (a wrong AE title the peer rejects, an unknown UID) are InputError (exit 3).
#include <stdexcept>

namespace medseg {

class PacsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace medseg
