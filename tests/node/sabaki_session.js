// Drives `gozero gtp` through Sabaki's GTP client, @sabaki/gtp (not written here), and reads the
// analysis lines the way Sabaki does. Prints one JSON object for tests/system/test_cli_gtp_sabaki.py.
//
// usage: node sabaki_session.js PYTHON MODEL_DIR
'use strict'
const {Controller} = require('@sabaki/gtp')

const [python, modelDir] = process.argv.slice(2)
const VERTEX = /^[A-Za-z]\d+$/
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// Sabaki's reading of one analysis line (its src/modules/analysis.js `parseAnalysis`, restated):
// the line splits at each "info"; in each part the principal variation is the run of vertices at
// its end (cut at the first pass), the words before "pv" are key-value pairs, a winrate with a
// decimal point is a fraction (KataGo), one without is in 10000ths (Leela Zero); Sabaki keeps
// percent. Moves that are not board vertices (pass) are dropped.
function parseAnalysis(line) {
  const variations = []
  for (const part of line.split(/\s*info\s+/).slice(1).map(x => x.trim())) {
    const pvMatch = part.match(/(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$/)
    if (pvMatch == null) continue
    const words = part.slice(0, pvMatch.index).trim().split(/\s+/).slice(0, -1) // drops "pv"
    const fields = {}
    for (let i = 0; i + 1 < words.length; i += 2) fields[words[i]] = words[i + 1]
    const passAt = pvMatch[0].indexOf('pass')
    const pv = (passAt < 0 ? pvMatch[0] : pvMatch[0].slice(0, passAt)).split(/\s+/).filter(x => x.length >= 2)
    if (!VERTEX.test(fields.move || '')) continue
    variations.push({
      move: fields.move,
      visits: +fields.visits,
      winrate: fields.winrate.includes('.') ? +fields.winrate * 100 : +fields.winrate / 100,
      scoreLead: fields.scoreLead != null ? +fields.scoreLead : null,
      pv,
    })
  }
  return variations
}

// Send an analysis command, let it ponder for `ms`, then stop it by sending the next command.
async function analyse(controller, name, args, ms) {
  const lines = []
  const analysis = controller.sendCommand({name, args}, ({line}) => {
    if (line.startsWith('info ')) lines.push(line)
  })
  await sleep(ms)
  const next = controller.sendCommand({name: 'name'})
  const response = await analysis
  return {error: response.error, lines, updates: lines.map(parseAnalysis), next: (await next).content}
}

async function main() {
  const controller = new Controller(python, ['-m', 'flows.cli', 'gtp', '--model', modelDir, '--sims', '24'])
  controller.start()
  const result = {}
  result.commands = (await controller.sendCommand({name: 'list_commands'})).content.split('\n')
  result.known = (await controller.sendCommand({name: 'known_command', args: ['lz-analyze']})).content
  result.boardsize13 = await controller.sendCommand({name: 'boardsize', args: ['13']})
  await controller.sendCommand({name: 'play', args: ['B', 'E5']})
  result.lz = await analyse(controller, 'lz-analyze', ['W', '10'], 1500)
  result.kata = await analyse(controller, 'kata-analyze', ['W', 'interval', '10', 'minmoves', '4'], 1000)
  const genmoveLines = []
  const genmove = await controller.sendCommand({name: 'kata-genmove_analyze', args: ['W', '5']}, ({line}) => {
    if (line.startsWith('info ')) genmoveLines.push(line)
  })
  result.genmove = {error: genmove.error, content: genmove.content, updates: genmoveLines.map(parseAnalysis)}
  const played = genmove.content.split('\n').pop().split(' ')[1]
  result.replay = await controller.sendCommand({name: 'play', args: ['B', played]}) // taken: refused
  await controller.stop()
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch(error => {
  process.stderr.write(`${error.stack}\n`)
  process.exit(1)
})
