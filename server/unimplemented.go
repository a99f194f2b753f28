package server

// isUnimplemented reports the LSP requests fixpoint deliberately does not
// serve. They, and any other unknown request (codeAction/resolve
// included), get MethodNotFound; unknown notifications are ignored.
func isUnimplemented(method string) bool {
	switch method {
	case "textDocument/completion",
		"completionItem/resolve",
		"textDocument/hover",
		"textDocument/signatureHelp",
		"textDocument/declaration",
		"textDocument/definition",
		"textDocument/typeDefinition",
		"textDocument/implementation",
		"textDocument/references",
		"textDocument/documentHighlight",
		"textDocument/documentSymbol",
		"codeAction/resolve",
		"textDocument/codeLens",
		"codeLens/resolve",
		"textDocument/documentLink",
		"documentLink/resolve",
		"textDocument/documentColor",
		"textDocument/colorPresentation",
		"textDocument/formatting",
		"textDocument/rangeFormatting",
		"textDocument/onTypeFormatting",
		"textDocument/rename",
		"textDocument/prepareRename",
		"textDocument/foldingRange",
		"textDocument/selectionRange",
		"textDocument/willSaveWaitUntil",
		"workspace/symbol",
		"textDocument/semanticTokens/full",
		"textDocument/semanticTokens/full/delta",
		"textDocument/semanticTokens/range",
		"textDocument/linkedEditingRange",
		"textDocument/moniker",
		"textDocument/prepareCallHierarchy",
		"callHierarchy/incomingCalls",
		"callHierarchy/outgoingCalls",
		"workspace/willCreateFiles",
		"workspace/willRenameFiles",
		"workspace/willDeleteFiles":
		return true
	}
	return false
}
