import ArgumentParser
import Dedog
import DedogCatalogue
import DedogFiles
import DedogServer
import DedogCLI
import Foundation
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Answer breed questions over HTTP: one loaded model for photo managers, scripts and the web page.",
        discussion: """
            Keeps the model loaded and classifies photos sent to it, several at once. Open http://127.0.0.1:8080/ \
            in a browser (a phone on the home network with --host 0.0.0.0) for dedog's page: identify a photo or \
            the camera's, the dog named live as the camera points at it, a history kept in the browser, the breed \
            catalogue, the breed quiz (quizzes from dedog quiz make with --quizzes DIR), and "this is my dog" to \
            teach your own model (--learn-model FILE). The page needs no internet. Phones give the page the live \
            camera only over HTTPS: --tls-cert and --tls-key (docs/serving.md says how to make a certificate).

            The API follows what model servers already speak (TorchServe's path, Hugging Face's label/score, \
            Kubernetes' health routes); GET /openapi.json describes every route.

              curl --data-binary @rex.jpg http://127.0.0.1:8080/predictions/dedog
              curl -F data=@rex.jpg -F data=@bella.heic 127.0.0.1:8080/predictions/dedog
              curl --data-binary @rex.jpg '127.0.0.1:8080/predictions/dedog?top_k=5&lang=cs'
              curl 'http://127.0.0.1:8080/v1/breeds?q=civava'

            It listens on 127.0.0.1 (this machine only) unless told otherwise. Another address (--host 0.0.0.0 for \
            the home network) needs --token, which every call but the health checks must then send as \
            "Authorization: Bearer TOKEN", or an explicit --no-auth (the page asks for the token once and keeps it \
            in the browser). Photos are not stored; only a photo confirmed on the page is learnt into --learn-model.

            Limits: a body over --max-body gets 413, a photo over --max-megapixels 413, a damaged photo 422, something \
            that is no photo 415; when --workers photos are being classified and --queue more are waiting, further \
            requests get 503 with Retry-After. SIGTERM or Ctrl-C stops accepting, finishes what is in flight (at most \
            --shutdown-timeout seconds) and exits 0.
            """
    )

    @Option(help: ArgumentHelp("Address to listen on: 127.0.0.1 (this machine), 0.0.0.0 (every network).", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("Port to listen on (0: any free port, printed at start).", valueName: "port"))
    var port = 8080

    @Option(help: ArgumentHelp("The model: a model file from `dedog train`, or a bundled one by name ("
                               + ModelLocator.bundled.map(\.name).joined(separator: ", ")
                               + "). Default: $DEDOG_MODEL, else \"default\".", valueName: "name|file"))
    var model: String?

    @Option(help: ArgumentHelp("The name the API gives the model: photos are classified at POST /predictions/NAME "
                               + "(TorchServe's way of naming models); letters, digits, '.', '_' and '-'.", valueName: "name"))
    var modelName = "dedog"

    @Option(help: Environment.kernelsHelp)
    var kernels: String?

    @Option(help: Precision.help)
    var precision: Precision?

    @Option(help: "Photos classified at once, each on a thread of its own (default: one per core).")
    var workers = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Requests that may wait beyond those being classified; more get 503.", valueName: "n"))
    var queue = 16

    @Option(help: ArgumentHelp("The largest request body, e.g. 50M or 200M.", valueName: "size"))
    var maxBody = MemorySize(bytes: 50 << 20)

    @Option(help: ArgumentHelp("The most photos one multipart request may carry.", valueName: "n"))
    var maxParts = 16

    @Option(help: ArgumentHelp("Refuse photos larger than this many megapixels (from their header, before decoding).",
                               valueName: "n"))
    var maxMegapixels = 100

    @Option(help: ArgumentHelp("Seconds a client has to send its whole request; slower ones get 408 (keep it below --idle-timeout).", valueName: "seconds"))
    var requestTimeout = 20

    @Option(help: ArgumentHelp("Seconds an idle connection is kept open.", valueName: "seconds"))
    var idleTimeout = 30

    @Option(help: ArgumentHelp("Seconds in-flight requests get to finish after SIGTERM or Ctrl-C.", valueName: "seconds"))
    var shutdownTimeout = 10

    @Option(help: ArgumentHelp("Require \"Authorization: Bearer TOKEN\" on every route but health.", valueName: "token"))
    var token: String?

    @Option(help: ArgumentHelp("Read the token from this file (keeps it out of the process list).", valueName: "file"))
    var tokenFile: String?

    @Flag(help: "Allow calls without a token on an address other machines can reach.")
    var noAuth = false

    @Option(help: ArgumentHelp("Let web pages from this origin call the API (CORS), e.g. https://photos.example; repeatable.",
                               valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(help: ArgumentHelp("Breed catalogue JSON to use instead of the bundled one.", valueName: "file"))
    var catalogue: String?

    @Option(help: ArgumentHelp("Serve this model file of yours and let the page teach it photos you confirm "
                               + "(as dedog learn; undo removes them). Never a bundled model; instead of --model.",
                               valueName: "file"))
    var learnModel: String?

    @Option(help: ArgumentHelp("A folder of quiz files (dedog quiz make) the page offers to play.", valueName: "dir"))
    var quizzes: String?

    @Option(help: ArgumentHelp("Serve HTTPS with this certificate (PEM; its chain after it). Phones give the page's "
                               + "live camera only over HTTPS. Needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The certificate's private key (PEM).", valueName: "file"))
    var tlsKey: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard (1...256).contains(workers) else { throw ValidationError("--workers must be between 1 and 256.") }
        guard (0...10_000).contains(queue) else { throw ValidationError("--queue must be between 0 and 10000.") }
        guard (1...10_000).contains(maxParts) else { throw ValidationError("--max-parts must be between 1 and 10000.") }
        guard (1...10_000).contains(maxMegapixels) else { throw ValidationError("--max-megapixels must be between 1 and 10000.") }
        for (name, value) in [("--request-timeout", requestTimeout), ("--idle-timeout", idleTimeout),
                              ("--shutdown-timeout", shutdownTimeout)] {
            guard (1...86_400).contains(value) else { throw ValidationError("\(name) must be between 1 and 86400 seconds.") }
        }
        guard modelName.wholeMatch(of: /[A-Za-z0-9][A-Za-z0-9._-]{0,63}/) != nil else {
            throw ValidationError("--model-name \"\(modelName)\": give 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit.")
        }
        if token != nil && tokenFile != nil { throw ValidationError("--token and --token-file both give a token; give one.") }
        if noAuth && (token != nil || tokenFile != nil) { throw ValidationError("--no-auth and a token disagree; give one.") }
        var server = ServerConfiguration()
        server.host = host
        if let learnModel {
            guard model == nil else {
                throw ValidationError("--learn-model serves the model it teaches; give it instead of --model, not with it.")
            }
            try refuseBundled(learnModel)
            guard FileManager.default.fileExists(atPath: learnModel) else {
                throw ValidationError("--learn-model \(learnModel): no such file; copy a bundled model there or train one.")
            }
            let folder = URL(fileURLWithPath: learnModel).deletingLastPathComponent().path
            guard FileManager.default.isWritableFile(atPath: learnModel), FileManager.default.isWritableFile(atPath: folder) else {
                throw ValidationError("--learn-model \(learnModel): the file or its folder is not writable, and learning rewrites it.")
            }
            if !server.isLoopback && noAuth {
                throw ValidationError("--learn-model on \(host) changes your model for anyone who can reach it: give --token "
                                      + "instead of --no-auth.")
            }
        }
        switch (tlsCert, tlsKey) {
        case (nil, nil): break
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key, the certificate's private key.")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert, the certificate it belongs to.")
        case let (.some(cert), .some(key)):
            for (flag, file) in [("--tls-cert", cert), ("--tls-key", key)] where !FileManager.default.isReadableFile(atPath: file) {
                throw ValidationError("\(flag) \(file): no such readable file (docs/serving.md says how to make a certificate).")
            }
        }
        if let quizzes, !FolderWalk.isFolder(quizzes) {
            throw ValidationError("--quizzes \(quizzes): \(FolderWalk.whyMissing(quizzes)); give a folder of quiz files.")
        }
        if !server.isLoopback && token == nil && tokenFile == nil && !noAuth {
            throw ValidationError("--host \(host) lets other machines call the API: give --token TOKEN (or --token-file FILE) "
                                  + "that callers must send, or --no-auth to let anyone on the network use it.")
        }
    }

    func run() async throws {
        var server = ServerConfiguration()
        server.host = host
        server.port = port
        server.modelName = modelName
        server.queue = queue
        server.maxBodyBytes = maxBody.bytes
        server.maxParts = maxParts
        server.requestTimeout = .seconds(requestTimeout)
        server.idleTimeout = .seconds(idleTimeout)
        server.shutdownTimeout = .seconds(shutdownTimeout)
        server.corsOrigins = corsOrigin
        server.learnModel = learnModel.map { URL(fileURLWithPath: $0) }
        server.quizFolder = quizzes.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let tlsCert, let tlsKey {
            server.tls = .init(certificate: URL(fileURLWithPath: tlsCert), privateKey: URL(fileURLWithPath: tlsKey))
        }
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile),
                  let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
                Terminal.error("--token-file \(tokenFile): no token could be read from it")
                throw ExitCode.validationFailure
            }
            server.token = text
        } else {
            server.token = token
        }

        let service: DedogService
        guard let kernels = Environment.kernelsOrReport(self.kernels) else { throw Status.modelUnavailable }
        do {
            let classifier = try Classifier(modelURL: server.learnModel ?? Environment.model(model), configuration: .init(
                workers: workers, threadsPerWorker: 1, kernels: kernels, precision: precision, maxPixels: maxMegapixels * 1_000_000,
                maxFileBytes: maxBody.bytes))
            let breeds = try Catalogue.load(catalogue)
            if server.learnModel != nil && !classifier.info.learnsConfirmedPhotos {
                throw ClassifierError.notTrainable(reason: "it has no breed head of its own (an ImageNet base); train one with dedog train first")
            }
            service = try DedogService(classifier: classifier, catalogue: breeds, configuration: server)
            for refused in service.refusedQuizzes { Terminal.warning("--quizzes: \(refused.file): \(refused.reason)") }
        } catch {
            Terminal.error(error)
            throw Status.modelUnavailable
        }
        var logger = Logger(label: "dedog") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        let auth = server.token != nil ? "callers need the token" : server.isLoopback ? "no token (this machine only)"
            : "NO token: anyone who can reach \(host) may call it (--no-auth)"
        let (host, model, scheme) = (server.host, service.classifier.modelURL.lastPathComponent, server.tls == nil ? "http" : "https")
        let (workers, places) = (self.workers, self.workers + server.queue)
        do {
            try await DedogServer.run(service, logger: logger) { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                Terminal.progress("dedog: serving \(model) on \(scheme)://\(shown):\(port) — \(workers) worker(s), "
                                  + "\(places) places; \(auth)")
            }
        } catch let error as ServerError {
            if case .tls = error { Terminal.error("--tls-cert/--tls-key: \(error)") } else { Terminal.error("the server stopped: \(error)") }
            throw ExitCode.failure
        } catch {
            Terminal.error("the server stopped: \(error)")
            throw ExitCode.failure
        }
    }
}
