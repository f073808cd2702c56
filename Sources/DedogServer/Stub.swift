import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import MultipartKit
