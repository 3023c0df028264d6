package function

import "github.com/crossplane/function-sdk-go/logging"

// Logger is the structured logger handed to every function runner.
type Logger = logging.Logger
