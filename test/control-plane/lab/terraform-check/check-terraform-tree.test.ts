import { describe, expect, it } from 'vitest'
import { checkTerraformTree } from '../../../../control-plane/lab/terraform-check/check-terraform-tree.ts'
import { formatFinding } from '../../../../control-plane/lab/terraform-check/terraform-finding.ts'
import { checkBroken, minimalFixture, schemaDir } from './broken-terraform.ts'

const child = 'modules/edge-user/main.tf'
const root = 'environments/dev/main.tf'

describe('the offline Terraform checker', () => {
  it('passes the repository tree under infra/terraform', async () => {
    const result = await checkTerraformTree('infra/terraform', { schemaDir })
    expect(result.findings.map(formatFinding)).toEqual([])
    expect(result.modules).toContain('infra/terraform/environments/example')
  })

  it('passes the valid fixture every broken case starts from', async () => {
    const { findings } = await checkBroken([])
    expect(findings).toEqual([])
    expect(minimalFixture).toMatch(/minimal$/)
  })

  it('reports an HCL syntax error at the parser line', async () => {
    const broken = await checkBroken([
      { file: child, find: '  path = var.path\n', replace: '  path = \n' },
    ])
    expect(broken.findings).toHaveLength(1)
    expect(broken.findings[0]).toMatch(
      new RegExp(
        `^${child}:${broken.lineOf(child, '  path = \n')}: HCL syntax: Invalid expression`,
      ),
    )
  })

  it('reports an undefined variable', async () => {
    const broken = await checkBroken([
      { file: child, find: 'name = var.user_name', replace: 'name = var.usr_name' },
    ])
    expect(broken.findings).toEqual([
      `${child}:${broken.lineOf(child, 'var.usr_name')}: undefined variable var.usr_name`,
    ])
  })

  it('reports each block that uses an undefined variable, at its own line', async () => {
    const broken = await checkBroken([
      { file: child, find: 'name = var.user_name', replace: 'name = var.nope' },
      { file: child, find: 'user  = aws_iam_user.edge.name', replace: 'user  = var.nope' },
    ])
    expect(broken.findings).toEqual([
      `${child}:${broken.lineOf(child, 'name = var.nope')}: undefined variable var.nope`,
      `${child}:${broken.lineOf(child, 'user  = var.nope')}: undefined variable var.nope`,
    ])
  })

  it('reports an attribute the object type of a variable does not have', async () => {
    const broken = await checkBroken([
      { file: child, find: 'var.limits.requests', replace: 'var.limits.request' },
      { file: child, find: 'var.limits.burst[0].size', replace: 'var.limits.burst[0].sizes' },
    ])
    expect(broken.findings).toEqual([
      `${child}:${broken.lineOf(child, 'var.limits.request)')}: var.limits.request: the type of var.limits has no attribute request`,
      `${child}:${broken.lineOf(child, '.sizes')}: var.limits.burst[0].sizes: the type of var.limits has no attribute sizes`,
    ])
  })

  it('reports a reference to an output the module does not declare', async () => {
    const broken = await checkBroken([
      { file: root, find: 'module.edge_user.user_arn', replace: 'module.edge_user.user_urn' },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'user_urn')}: module.edge_user has no output user_urn (../../modules/edge-user)`,
    ])
  })

  it('reports a required module input left out', async () => {
    const broken = await checkBroken([
      { file: root, find: `  user_name = "\${var.name}-edge"\n`, replace: '' },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'module "edge_user"')}: module edge_user: missing required input user_name (../../modules/edge-user has no default for it)`,
    ])
  })

  it('reports an input the called module has no variable for', async () => {
    const edit = {
      file: root,
      find: '  user_name =',
      replace: '  colour    = "blue"\n  user_name =',
    }
    const broken = await checkBroken([edit])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'colour')}: module edge_user: unknown input colour (no such variable in ../../modules/edge-user)`,
    ])
  })

  it('reports a provider without a version, and a root module that does not pin one', async () => {
    const broken = await checkBroken([
      { file: root, find: '      version = "~> 6.28"\n', replace: '' },
      { file: root, find: '"~> 3.9"', replace: '">= 3.0"' },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'aws = {')}: required_providers.aws has no version constraint: pin it`,
      `${root}:${broken.lineOf(root, 'random = {')}: required_providers.random: a root module pins providers with "~> X.Y" or an exact version (found ">= 3.0")`,
    ])
  })

  it('reports a registry module without a pinned version', async () => {
    const call = 'module "vpc" {\n  source = "terraform-aws-modules/vpc/aws"\n}\n'
    const broken = await checkBroken([
      { file: root, find: 'output "user_arn"', replace: `${call}\noutput "user_arn"` },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'module "vpc"')}: module vpc: registry module terraform-aws-modules/vpc/aws needs version = "~> X.Y" or an exact version (found none)`,
    ])
  })

  it('checks calls to a registry module against its committed snapshot', async () => {
    const call =
      'module "vpc" {\n  source     = "terraform-aws-modules/vpc/aws"\n  version    = "~> 6.6"\n  cidr_block = "10.0.0.0/16"\n}\n'
    const broken = await checkBroken([
      { file: root, find: 'output "user_arn"', replace: `${call}\noutput "user_arn"` },
      { file: root, find: 'module.edge_user.user_arn', replace: 'module.vpc.subnet_ids' },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'cidr_block')}: module vpc: unknown input cidr_block (no such variable in terraform-aws-modules/vpc/aws 6.6.0)`,
      `${root}:${broken.lineOf(root, 'module.vpc.subnet_ids')}: module.vpc has no output subnet_ids (terraform-aws-modules/vpc/aws 6.6.0)`,
    ])
  })

  it('reports a variable without a description or a type', async () => {
    const broken = await checkBroken([
      { file: root, find: '  description = "AWS region."\n', replace: '' },
      { file: child, find: '  type        = list(number)\n', replace: '' },
    ])
    expect(broken.findings).toEqual(
      [
        `${root}:${broken.lineOf(root, 'variable "region"')}: variable region has no description`,
        `${child}:${broken.lineOf(child, 'variable "ports"')}: variable ports has no type`,
      ].sort(),
    )
  })

  it('reports a sensitive variable with a default, and a secret not marked sensitive', async () => {
    const broken = await checkBroken([
      {
        file: root,
        find: '  sensitive   = true\n}',
        replace: '  sensitive   = true\n  default     = "hunter2hunter2"\n}',
      },
      { file: child, find: 'variable "path"', replace: 'variable "db_password"' },
    ])
    expect(broken.findings).toEqual([
      `${root}:${broken.lineOf(root, 'hunter2')}: variable api_token is sensitive but has a default: secrets come from the caller`,
      `${child}:${broken.lineOf(child, 'variable "db_password"')}: variable db_password looks like a secret: mark it sensitive = true`,
      `${child}:${broken.lineOf(child, 'var.path')}: undefined variable var.path`,
    ])
  })

  it('reports outputs exposing sensitive values without sensitive = true', async () => {
    const unmark = (file: string, name: string) => ({
      file,
      find: `value       = ${name}\n  sensitive   = true\n`,
      replace: `value       = ${name}\n`,
    })
    const inRoot = await checkBroken([
      unmark(root, 'module.edge_user.secret_access_key'),
      unmark(root, 'length(var.api_token)'),
    ])
    expect(inRoot.findings).toEqual([
      `${root}:${inRoot.lineOf(root, 'output "secret_access_key"')}: output secret_access_key exposes the sensitive module.edge_user.secret_access_key: set sensitive = true`,
      `${root}:${inRoot.lineOf(root, 'output "token_length"')}: output token_length exposes the sensitive var.api_token: set sensitive = true`,
    ])
    // A splat loses its attribute in the parser's references: the whole resource counts.
    const inChild = await checkBroken([unmark(child, 'one(aws_iam_access_key.edge[*].secret)')])
    expect(inChild.findings).toEqual([
      `${child}:${inChild.lineOf(child, 'output "secret_access_key"')}: output secret_access_key exposes the sensitive aws_iam_access_key.edge: set sensitive = true`,
    ])
  })

  it('reports arguments the provider schema does not have, and required ones missing', async () => {
    const broken = await checkBroken([
      { file: child, find: '  path = var.path', replace: '  paht = var.path' },
      { file: child, find: '  length   = 32\n', replace: '' },
      { file: child, find: '      sid       =', replace: '      side      =' },
      { file: child, find: '  tags = local.tags', replace: '  arn  = "x"\n  tags = local.tags' },
    ])
    expect(broken.findings).toEqual([
      `${child}:${broken.lineOf(child, 'paht')}: aws_iam_user.edge: unknown argument paht (not in registry.terraform.io/hashicorp/aws 6.36.0)`,
      `${child}:${broken.lineOf(child, 'arn  =')}: aws_iam_user.edge: arn is read-only (the provider computes it)`,
      `${child}:${broken.lineOf(child, 'resource "random_password"')}: random_password.token: missing required argument length`,
      `${child}:${broken.lineOf(child, 'side')}: data.aws_iam_policy_document.invoke: unknown argument statement.side (not in registry.terraform.io/hashicorp/aws 6.36.0)`,
    ])
  })

  it("checks the keys of nested attribute objects, as in the Worker's bindings", async () => {
    const edge = 'modules/edge-cloudflare/main.tf'
    const broken = await checkBroken(
      [
        { file: edge, find: 'namespace_id = cloudflare', replace: 'namespaceId = cloudflare' },
        { file: edge, find: '    new_tag            =', replace: '    tag                =' },
      ],
      'infra/terraform',
    )
    const label = 'cloudflare_workers_script.edge'
    expect(broken.findings).toEqual([
      `${edge}:${broken.lineOf(edge, 'namespaceId')}: ${label}: unknown argument bindings.namespaceId (not in registry.terraform.io/cloudflare/cloudflare 5.22.0)`,
      `${edge}:${broken.lineOf(edge, '    tag ')}: ${label}: unknown argument migrations.tag (not in registry.terraform.io/cloudflare/cloudflare 5.22.0)`,
    ])
  })

  it('reports references to undeclared resources, data sources and misplaced meta names', async () => {
    const broken = await checkBroken([
      {
        file: child,
        find: 'user  = aws_iam_user.edge.name',
        replace: 'user  = aws_iam_user.edgy.name',
      },
      {
        file: child,
        find: 'data.aws_caller_identity.current',
        replace: 'data.aws_caller_identity.now',
      },
      {
        file: child,
        find: 'keepers  = { user = each.key }',
        replace: 'keepers  = { user = count.index }',
      },
      { file: child, find: 'statement.value', replace: 'stmt.value' },
    ])
    expect(broken.findings).toEqual([
      `${child}:${broken.lineOf(child, 'data.aws_caller_identity.now')}: reference to undeclared data source data.aws_caller_identity.now`,
      `${child}:${broken.lineOf(child, 'aws_iam_user.edgy')}: reference to undeclared resource aws_iam_user.edgy`,
      `${child}:${broken.lineOf(child, 'count.index')}: count.index outside a count block`,
      `${child}:${broken.lineOf(child, 'stmt.value')}: reference to undeclared resource stmt.value`,
    ])
  })

  it('reports a variables file that sets an undeclared variable or leaves a required one out', async () => {
    const tfvars = 'environments/dev/terraform.tfvars.example'
    const broken = await checkBroken([
      { file: tfvars, find: 'region = "us-east-1"', replace: 'regoin = "us-east-1"' },
    ])
    expect(broken.findings).toEqual([
      `${tfvars}:1: terraform.tfvars.example does not set the required variable region`,
      `${tfvars}:${broken.lineOf(tfvars, 'regoin')}: terraform.tfvars.example sets regoin, which is not a variable of the module`,
    ])
  })

  it('reports a declaration made twice', async () => {
    const twice =
      'output "user_arn" {\n  description = "Again."\n  value       = var.name\n}\n\noutput "user_arn" {'
    const broken = await checkBroken([{ file: root, find: 'output "user_arn" {', replace: twice }])
    const second = broken.lineOf(root, 'output "user_arn" {') + 5
    expect(broken.findings).toEqual([`${root}:${second}: output user_arn is declared twice`])
  })

  it('reports a module under modules/ that no configuration calls', async () => {
    const call = `module "edge_user" {\n  source = "../../modules/edge-user"\n\n  user_name = "\${var.name}-edge"\n}\n`
    const broken = await checkBroken([
      { file: root, find: call, replace: '' },
      { file: root, find: 'module.edge_user.user_arn', replace: 'var.name' },
      { file: root, find: 'module.edge_user.secret_access_key', replace: 'var.api_token' },
    ])
    expect(broken.findings).toEqual([
      `${child}:1: module modules/edge-user is not called by any configuration in this tree`,
    ])
  })

  it('does not pile findings on top of a syntax error in a called module', async () => {
    const broken = await checkBroken([
      { file: child, find: 'variable "ports" {', replace: 'variable "ports" {{' },
    ])
    expect(broken.findings).toHaveLength(1)
    expect(broken.findings[0]).toMatch(
      new RegExp(`^${child}:${broken.lineOf(child, '{{')}: HCL syntax: `),
    )
  })
})
