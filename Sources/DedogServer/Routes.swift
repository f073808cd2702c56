import Hummingbird

// Every route the server answers, each written once, in the controller for its part of the API (Hummingbird's
// `addRoutes(to:)` pattern). `Router.routes` lists them; a test compares that list with the OpenAPI document.

typealias Context = BasicRequestContext

extension DedogService {
    /// Adds every controller's routes to `router`.
    func addRoutes(to router: Router<Context>) {
        PageController(service: self).addRoutes(to: router)
        PredictionController(service: self).addRoutes(to: router)
        CatalogueController(service: self).addRoutes(to: router)
        ModelController(service: self).addRoutes(to: router)
        MemoryController(service: self).addRoutes(to: router)
        QuizController(service: self).addRoutes(to: router)
        OperationsController(service: self).addRoutes(to: router)
        PhotoPrismController(service: self).addRoutes(to: router)
    }
}

/// The web page and its files.
struct PageController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/") { request, _ in try service.asset("index.html", request) }
        router.get("/web/{file}") { request, context in try service.asset(context.parameters.get("file") ?? "", request) }
    }
}

/// Photos in, answers out.
struct PredictionController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.post("/predictions/{model}") { request, context in try await service.predict(request, context) }
    }
}

/// The breed catalogue.
struct CatalogueController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/v1/breeds") { request, _ in try service.breeds(request) }
        router.get("/v1/breeds/{id}") { request, context in try service.breed(request, context) }
    }
}

/// The API's index and the loaded model.
struct ModelController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/v1") { _, _ in service.index() }
        router.get("/v1/models") { _, _ in service.models() }
    }
}

/// The confirmed photos of `--learn-model`.
struct MemoryController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/v1/memory") { request, _ in try service.memory(request) }
        router.post("/v1/memory") { request, _ in try await service.learn(request) }
        router.delete("/v1/memory/{fingerprint}") { request, context in try await service.forget(context.parameters.get("fingerprint") ?? "", request) }
    }
}

/// The quizzes of `--quizzes`, and quiz files users bring.
struct QuizController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/v1/quizzes") { _, _ in service.quizList() }
        router.get("/v1/quizzes/{name}") { _, context in try await service.quiz(named: context.parameters.get("name") ?? "") }
        router.post("/v1/quizzes/check") { request, _ in try await service.checkQuiz(request) }
    }
}

/// What orchestrators and monitoring ask: health, metrics, the API's description.
struct OperationsController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.get("/ping") { _, _ in JSONResponse.make(.ok, ["status": "Healthy"]) }
        router.get("/v2/health/live") { _, _ in JSONResponse.make(.ok, ["live": true]) }
        router.get("/v2/health/ready") { _, _ in
            JSONResponse.make(service.isReady ? .ok : .serviceUnavailable, ["ready": service.isReady])
        }
        router.get("/metrics") { _, _ in service.metricsText() }
        router.get("/openapi.json") { _, _ in JSONResponse.make(.ok, data: service.openAPI) }
    }
}
