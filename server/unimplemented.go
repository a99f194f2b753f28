package server

// Requests fixpoint deliberately does not serve. An editor sends some of
// them whatever the server's capabilities say (eglot asks for
// textDocument/documentSymbol in every real major mode, for imenu and
// which-function-mode), and an error reply to them becomes an error in
// the editor (an imenu error in the echo area after every edit, an error
// state in the mode line). So each is answered with its empty result,
// never with MethodNotFound: fixpoint simply has nothing to contribute.
// The */resolve requests resolve items fixpoint never gave out; they,
// and any request not listed here or in Server.handlers, get
// MethodNotFound. Unknown notifications are ignored.

// emptyResult is the answer to an unimplemented request: emptyArray
// for list results ([]), emptyNull for the others (null).
type emptyResult int

const (
	emptyNull emptyResult = iota + 1
	emptyArray
)

// unimplemented maps each such request to its empty result.
var unimplemented = map[string]emptyResult{
	"textDocument/completion":                emptyNull,
	"textDocument/hover":                     emptyNull,
	"textDocument/signatureHelp":             emptyNull,
	"textDocument/declaration":               emptyArray,
	"textDocument/definition":                emptyArray,
	"textDocument/typeDefinition":            emptyArray,
	"textDocument/implementation":            emptyArray,
	"textDocument/references":                emptyArray,
	"textDocument/documentHighlight":         emptyArray,
	"textDocument/documentSymbol":            emptyArray,
	"textDocument/codeLens":                  emptyArray,
	"textDocument/documentLink":              emptyArray,
	"textDocument/documentColor":             emptyArray,
	"textDocument/colorPresentation":         emptyArray,
	"textDocument/formatting":                emptyArray,
	"textDocument/rangeFormatting":           emptyArray,
	"textDocument/onTypeFormatting":          emptyArray,
	"textDocument/rename":                    emptyNull,
	"textDocument/prepareRename":             emptyNull,
	"textDocument/foldingRange":              emptyArray,
	"textDocument/selectionRange":            emptyArray,
	"textDocument/willSaveWaitUntil":         emptyArray,
	"textDocument/inlayHint":                 emptyArray,
	"textDocument/semanticTokens/full":       emptyNull,
	"textDocument/semanticTokens/full/delta": emptyNull,
	"textDocument/semanticTokens/range":      emptyNull,
	"textDocument/linkedEditingRange":        emptyNull,
	"textDocument/moniker":                   emptyArray,
	"textDocument/prepareCallHierarchy":      emptyArray,
	"callHierarchy/incomingCalls":            emptyArray,
	"callHierarchy/outgoingCalls":            emptyArray,
	"workspace/symbol":                       emptyArray,
	"workspace/willCreateFiles":              emptyNull,
	"workspace/willRenameFiles":              emptyNull,
	"workspace/willDeleteFiles":              emptyNull,
}

// unimplementedResult returns the empty answer to method and true when it
// is one of the requests above.
func unimplementedResult(method string) (any, bool) {
	switch unimplemented[method] {
	case emptyArray:
		return []any{}, true
	case emptyNull:
		return nil, true
	}
	return nil, false
}
